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

    @Test func theClientAddressIsFormattedOnDemand() throws {
        #expect(try Request(method: .get, target: "/", remoteAddress: "::1").remoteAddress == "::1")
    }
}
