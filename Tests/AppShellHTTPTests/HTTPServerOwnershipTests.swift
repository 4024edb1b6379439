import AppShellHTTP
import AppShellTesting
import Testing

/// Who keeps a server alive while libmicrohttpd calls it back: its daemon, from `start()` to
/// `shutdown()`.
@Suite struct HTTPServerOwnershipTests {
    @Test func aStartedServerIsHeldByItsDaemonUntilShutDown() throws {
        var router = Router()
        router.get("/") { _ in .text("here") }
        weak var weakServer: HTTPServer?
        var port = 0
        do {
            var configuration = LiveServer.testConfiguration
            configuration.host = "127.0.0.1"
            configuration.port = 0
            let server = HTTPServer(configuration: configuration, responder: router)
            try server.start()
            port = server.port
            weakServer = server
        }
        // Nothing but the daemon holds it now, and it still answers.
        #expect(weakServer != nil)
        let response = try TestClient(port: port).get("/")
        #expect(response.status == 200)
        #expect(response.text == "here")
        // Shut down, the daemon gives its reference back: the server goes.
        #expect(try #require(weakServer).shutdown(timeoutSeconds: 1))
        #expect(weakServer == nil)
    }

    @Test func aServerThatCannotListenIsNotKept() throws {
        let taken = try LiveServer(responder: Router())
        defer { taken.stop() }
        weak var weakServer: HTTPServer?
        do {
            var configuration = LiveServer.testConfiguration
            configuration.host = "127.0.0.1"
            configuration.port = taken.port
            let server = HTTPServer(configuration: configuration, responder: Router())
            weakServer = server
            #expect(throws: HTTPServerError.self) { try server.start() }
        }
        #expect(weakServer == nil)
    }
}
