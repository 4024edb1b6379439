import AppShellDemo
import AppShellHTTP
import AppShellTesting
import Testing

/// An action's body is at most `maxActionBodyBytes` (16 KiB), whatever the server's `maxBodyBytes`
/// (issue 31, finding 7).
@Suite struct ActionBodyLimitTests {
    /// Fails on the code before: the 20 000-byte body was read (the server's limit was 1 MiB) and
    /// answered as an action, not 413.
    @Test(arguments: ["/api/actions", "/actions"])
    func anActionLongerThanItsLimitIs413(path: String) throws {
        let (_, live) = try ShellAPITests.start()
        let client = live.client()
        _ = try client.get("/api/state")
        let padding = String(repeating: "x", count: 20_000)
        let answer = try client.send(
            "POST", path, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: Array(#"{"action": "showList", "padding": "\#(padding)"}"#.utf8))
        #expect(answer.status == 413)
        #expect(answer.json["error"]?.stringValue == "the request body is larger than 16384 bytes")
        // An ordinary action still goes through.
        #expect(try ShellAPITests.login(client).status == 200)
    }
}
