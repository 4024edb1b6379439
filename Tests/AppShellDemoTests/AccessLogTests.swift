import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The access log of the real process: every line of a request carries the id its answer sent
/// back in `X-Request-ID`.
@Suite struct AccessLogTests {
    @Test func everyLineCarriesTheRequestIDOfItsAnswer() throws {
        let running = try CommandTests.run(environment: ["APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "true"])
        let port = try running.port()
        let client = TestClient(port: port)
        let kept = try client.get("/healthz", headers: [("X-Request-ID", "from-the-proxy.42")])
        let generated = try client.get("/api/state")
        let replaced = try client.get("/no/such/file", headers: [("X-Request-ID", "not a token")])
        #expect(kept.headers["X-Request-ID"] == "from-the-proxy.42")
        let generatedID = try #require(generated.headers["X-Request-ID"])
        let replacedID = try #require(replaced.headers["X-Request-ID"])
        #expect(replacedID != "not a token")
        #expect(generatedID != replacedID)
        running.terminate()
        #expect(running.waitForExit() == 0)
        let lines = running.outputText.split(separator: "\n").compactMap { try? JSON(parsing: String($0)) }
        let requests = lines.filter { $0["path"] != nil }
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0["requestID"]?.stringValue?.isEmpty == false })
        func id(of path: String) -> String? {
            requests.first { $0["path"]?.stringValue == path }?["requestID"]?.stringValue
        }
        #expect(id(of: "/healthz") == "from-the-proxy.42")
        #expect(id(of: "/api/state") == generatedID)
        #expect(id(of: "/no/such/file") == replacedID)
    }

    /// Every line names the client: the peer, or behind a trusted proxy the address it forwarded.
    @Test func everyLineNamesTheClient() throws {
        let running = try CommandTests.run(environment: [
            "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "true", "APPSHELL_TRUSTED_PROXIES": "127.0.0.1",
        ])
        let port = try running.port()
        let client = TestClient(port: port)
        _ = try client.get("/healthz")
        _ = try client.get("/api/state", headers: [("X-Forwarded-For", "203.0.113.7")])
        running.terminate()
        #expect(running.waitForExit() == 0)
        let lines = running.outputText.split(separator: "\n").compactMap { try? JSON(parsing: String($0)) }
        func logged(_ path: String) -> String? {
            lines.first { $0["path"]?.stringValue == path }?["client"]?.stringValue
        }
        #expect(logged("/healthz") == "127.0.0.1")
        #expect(logged("/api/state") == "203.0.113.7")
    }
}
