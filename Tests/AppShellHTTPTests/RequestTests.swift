import AppShellHTTP
import Testing

/// Request parsing without a server.
@Suite struct RequestTests {
    static func request(cookies: [String]) throws -> Request {
        var headers = HTTPHeaders()
        for value in cookies { headers.add(name: "Cookie", value: value) }
        return try Request(method: .get, target: "/", headers: headers)
    }

    @Test(arguments: [
        (["sid=abc"], "abc"),
        (["a=1; sid=abc; b=2"], "abc"),
        (["a=1;sid=abc"], "abc"),
        (["sid2=no; sid=yes"], "yes"),
        (["xsid=no"], nil),
        (["sid=\"quoted\""], "quoted"),
        (["sid=first; sid=second"], "first"),
        (["a=1", "sid=later"], "later"),
        (["sid="], ""),
        (["sid"], nil),
        ([], nil),
    ])
    func findsOneCookieByName(headers: [String], expected: String?) throws {
        let request = try Self.request(cookies: headers)
        #expect(request.cookie(named: "sid") == expected)
        #expect(request.cookies["sid"] == expected)
    }

    /// Found by the request-target fuzz target: an absolute-form target whose path begins with
    /// `/` and a combining mark (one Character) got a second `/` in its origin form, which then
    /// named another path (`//\u{301}x`) than the request's segments.
    @Test func anAbsoluteFormTargetKeepsAPathBeginningWithACombiningMark() throws {
        let request = try Request(method: .get, target: "http://localhost/\u{301}x?a=1")
        #expect(request.target == "/\u{301}x?a=1")
        #expect(request.pathSegments == ["\u{301}x"])
        #expect(request.host == "localhost")
    }

    /// The body's media type is compared on the field's bytes: case, spaces and parameters aside,
    /// as `contentType` reads it.
    @Test(arguments: [
        ("application/json", true), ("Application/JSON", true), (" application/json ; charset=utf-8", true),
        ("application/json;charset=utf-8", true), ("\tapplication/json\t", true), ("application/jsonx", false),
        ("application/jso", false), ("text/plain", false), ("", false), (";;application/json", true),
        (" ; application/json", false),
        ("application/ json", false),
    ])
    func theJSONBodyNeedsItsMediaType(field: String, accepted: Bool) throws {
        let request = try Request(
            method: .post, target: "/", headers: ["Content-Type": field], body: Array("{\"a\":1}".utf8))
        #expect((request.contentType == "application/json") == accepted)
        if accepted {
            #expect(try request.decodeJSON() == ["a": 1])
        } else {
            #expect(throws: HTTPError.self) { try request.decodeJSON() }
        }
        #expect(throws: HTTPError.self) { try request.decodeForm() }
    }

    @Test func aFormBodyNeedsItsMediaType() throws {
        for field in ["application/x-www-form-urlencoded", "APPLICATION/X-WWW-FORM-URLENCODED; charset=utf-8"] {
            let request = try Request(
                method: .post, target: "/", headers: ["Content-Type": field], body: Array("a=1&b=2".utf8))
            #expect(try request.decodeForm() == ["a": "1", "b": "2"])
        }
        let json = try Request(
            method: .post, target: "/", headers: ["Content-Type": "application/json"], body: Array("a=1".utf8))
        #expect(throws: HTTPError.self) { try json.decodeForm() }
    }

    @Test func theClientAddressIsFormattedOnDemand() throws {
        #expect(try Request(method: .get, target: "/", remoteAddress: "::1").remoteAddress == "::1")
    }
}
