import AppShellHTTP
import AppShellTesting
import Testing

/// Allowed hosts (checked by the server before its responder) and the client address behind
/// trusted proxies.
@Suite struct HostAndClientTests {
    static func request(host: [String], target: String = "/") throws -> Request {
        var headers = HTTPHeaders()
        for value in host { headers.add(name: "Host", value: value) }
        return try Request(method: .get, target: target, headers: headers)
    }

    static let allowed = try! AllowedHosts(["app.example.com", ".example.org", "*.example.net", "::1", "192.0.2.7"])

    @Test(arguments: [
        "localhost", "127.0.0.1:8080", "[::1]:80", "app.example.com", "APP.example.COM.", "app.example.com:",
        "example.org", "deep.sub.example.org", "a.example.net", "198.51.100.3", "[2001:db8::1]:8080", "",
    ])
    func served(host: String) throws {
        #expect(Self.allowed.refusal(for: try Self.request(host: [host])) == nil)
    }

    @Test(arguments: [
        "evil.example", "app.example.com.evil.example", "xexample.org", "example.net", "app.example.com:80x",
        "localhost:", "[::1", "[nonsense]", "1.2.3", "app.example.com@evil", "..", ".",
        // An address literal that a NUL byte cut short (found by the forwarded fuzz target).
        "[::1\u{0}evil.example]",
    ])
    func refused(host: String) throws {
        let refusal = Self.allowed.refusal(for: try Self.request(host: [host]))
        if host == "localhost:" {
            #expect(refusal == nil)  // an empty port is allowed by RFC 3986
        } else {
            #expect(refusal?.status == .misdirectedRequest)
        }
    }

    @Test func noHostIsServedAndTwoAreRefused() throws {
        #expect(Self.allowed.refusal(for: try Self.request(host: [])) == nil)
        #expect(Self.allowed.refusal(for: try Self.request(host: ["localhost", "localhost"]))?.status == .badRequest)
    }

    @Test(arguments: ["app.example.com:443", "exa mple.com", "-bad.example", "*.", ".", "a..b", "*", "http://x", ""])
    func malformedEntriesAreRefused(entry: String) {
        #expect(throws: HTTPServerError.self) { try AllowedHosts([entry]) }
    }

    /// A responder that answers with the client and peer addresses it was given.
    static func echo() -> ClosureResponder {
        ClosureResponder { request in .text("\(request.clientAddress) \(request.remoteAddress)") }
    }

    static func start(trusting proxies: [String]) throws -> LiveServer {
        var configuration = LiveServer.testConfiguration
        configuration.trustedProxies = try TrustedProxies(proxies)
        return try LiveServer(configuration: configuration, responder: echo())
    }

    @Test(arguments: [
        ("203.0.113.9", "203.0.113.9"),
        ("203.0.113.9, 10.0.0.2", "203.0.113.9"),
        ("198.51.100.1, 203.0.113.9, 10.0.0.2", "203.0.113.9"),
        ("10.0.0.3, 10.0.0.2", "10.0.0.3"),
        ("203.0.113.9:4711", "203.0.113.9"),
        ("[2001:db8::5]:4711", "2001:db8::5"),
        ("2001:db8::5", "2001:db8::5"),
        ("198.51.100.1, garbage, 10.0.0.2", "10.0.0.2"),
        ("203.0.113.9, garbage", "127.0.0.1"),
        // Found by the forwarded fuzz target: an unclosed bracket, or something after `]` or
        // after a v4 address's colon that is not a port, was read as the address inside.
        ("[2001:db8::5", "127.0.0.1"),
        ("[2001:db8::5]x", "127.0.0.1"),
        ("[2001:db8::5]:80x", "127.0.0.1"),
        ("203.0.113.9:http", "127.0.0.1"),
        ("", "127.0.0.1"),
    ])
    func aTrustedProxysForwardedForGivesTheClient(forwarded: String, client: String) throws {
        let live = try Self.start(trusting: ["127.0.0.1", "10.0.0.0/8"])
        let headers = forwarded.isEmpty ? [] : [("X-Forwarded-For", forwarded)]
        #expect(try live.client().get("/", headers: headers).text == "\(client) 127.0.0.1")
    }

    @Test func forwardedForFromAnUntrustedPeerIsIgnored() throws {
        let live = try Self.start(trusting: ["10.0.0.0/8"])
        let answer = try live.client().get("/", headers: [("X-Forwarded-For", "203.0.113.9")])
        #expect(answer.text == "127.0.0.1 127.0.0.1")
        let none = try HostAndClientTests.startWithoutProxies()
        #expect(try none.client().get("/", headers: [("X-Forwarded-For", "203.0.113.9")]).text == "127.0.0.1 127.0.0.1")
    }

    static func startWithoutProxies() throws -> LiveServer {
        try LiveServer(responder: echo())
    }

    @Test func severalForwardedForFieldsReadAsOneList() throws {
        let live = try Self.start(trusting: ["127.0.0.1"])
        let answer = try live.client().get(
            "/", headers: [("X-Forwarded-For", "198.51.100.1"), ("X-Forwarded-For", "203.0.113.9")])
        #expect(answer.text == "203.0.113.9 127.0.0.1")
    }

    @Test(arguments: ["10.0.0.0/33", "1.2.3.4/", "fd00::/129", "localhost", "10.0.0.0/8/8", ""])
    func malformedProxiesAreRefused(entry: String) {
        #expect(throws: HTTPServerError.self) { try TrustedProxies([entry]) }
    }
}
