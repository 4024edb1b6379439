import AppShellConcurrency
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The `appshell` executable itself: configuration errors, serving, SIGTERM.
@Suite struct CommandTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs the built `appshell` in the package root.
    /// Each run gets its own SQLite file, removed with the process's value, unless `environment`
    /// names one.
    static func run(_ arguments: [String] = [], environment: [String: String] = [:]) throws -> ServerProcess {
        var environment = environment
        var folder: TemporaryDirectory?
        if environment["APPSHELL_STORE_PATH"] == nil {
            let own = try TemporaryDirectory("command")
            environment["APPSHELL_STORE_PATH"] = own.path("store.sqlite")
            folder = own
        }
        return try ServerProcess(
            product: "appshell", arguments: arguments, environment: environment, directory: packageRoot,
            owning: folder)
    }

    @Test func configurationErrorsExitWithStatus2AndOneLine() throws {
        let path = NSTemporaryDirectory() + "appshell-bad-\(UUID().uuidString).json"
        try #"{"port": 80, "colour": "blue"}"#.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let running = try Self.run(["--config", path])
        #expect(running.waitForExit() == 2)
        #expect(running.errorText == "appshell: configuration error: \(path): unknown key \"colour\"\n")
    }

    @Test func wrongTypeInTheEnvironmentExitsWithStatus2() throws {
        let running = try Self.run(environment: ["APPSHELL_PORT": "http"])
        #expect(running.waitForExit() == 2)
        #expect(
            running.errorText
                == "appshell: configuration error: environment: APPSHELL_PORT must be an integer from 0 to 65535, got \"http\"\n"
        )
    }

    @Test func unknownArgumentExitsWithStatus2() throws {
        let running = try Self.run(["--colour"])
        #expect(running.waitForExit() == 2)
        #expect(running.errorText.hasPrefix("appshell: unknown argument --colour"))
    }

    @Test func servesHealthAndStaticFilesThenStopsOnSIGTERM() throws {
        let running = try Self.run(environment: ["APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "true"])
        let port = try running.port()
        let client = TestClient(port: port)
        let health = try client.get("/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"ok"}"#)
        let index = try client.get("/")
        #expect(index.status == 200)
        #expect(index.headers["Content-Type"] == "text/html; charset=utf-8")
        running.terminate()
        #expect(running.waitForExit() == 0)
        let log = running.outputText
        let lines = log.split(separator: "\n").compactMap { try? JSON(parsing: String($0)) }
        let access = try #require(lines.first { $0["path"]?.stringValue == "/healthz" })
        #expect(access["method"] == "GET")
        #expect(access["status"] == 200)
        #expect(access["bytes"] == 15)
        #expect(access["micros"]?.integerValue != nil)
        #expect(access["time"]?.stringValue?.hasSuffix("Z") == true)
        #expect(lines.contains { $0["event"] == "stopped" && $0["inFlightFinished"] == true })
    }

    @Test func sigtermLetsAnInFlightRequestFinish() throws {
        let running = try Self.run(environment: ["APPSHELL_PORT": "0"])
        let port = try running.port()
        // A request whose body is only half sent is in flight when SIGTERM arrives.
        let body = #"{"a":1}"#
        let client = TestClient(port: port)
        let finished = DispatchSemaphore(value: 0)
        let answer = Locked("")
        let head =
            "POST /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n{\"a\""
        let connection = try RawConnection(port: port)
        try connection.send(head)
        // SIGTERM once the server has it in flight (it and the scrape itself; a fixed 200 ms
        // raced the server's reading of it on a busy machine).
        let observer = TestClient(port: port)
        #expect(
            eventually { (ShutdownTests.gauges(observer)["appshell_http_requests_in_flight"] ?? 0) >= 2 })
        running.terminate()
        usleep(200_000)
        #expect(running.process.isRunning)
        Thread.detachNewThread {
            answer.withLock { $0 = (try? connection.finish(":1}")) ?? "" }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(answer.withLock { $0 }.hasPrefix("HTTP/1.1 405"))
        #expect(running.waitForExit() == 0)
        // New connections are refused once stopped.
        #expect(throws: (any Error).self) { try client.get("/healthz") }
    }

    @Test func aCorruptStoreStopsTheStartAndIsNotReplaced() throws {
        let path = NSTemporaryDirectory() + "appshell-corrupt-\(UUID().uuidString).sqlite"
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try garbage.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let running = try Self.run(environment: ["APPSHELL_STORE_PATH": path, "APPSHELL_PORT": "0"])
        #expect(running.waitForExit() == 1)
        let message = running.errorText
        #expect(message.hasPrefix("appshell: cannot start: "))
        #expect(message.contains(path))
        #expect(message.split(separator: "\n").count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }
}

extension CommandTests {
    @Test func anIdleTimeoutOf0ExitsWithStatus2AndOneLine() throws {
        let running = try Self.run(environment: ["APPSHELL_IDLE_TIMEOUT_SECONDS": "0", "APPSHELL_PORT": "0"])
        #expect(running.waitForExit() == 2)
        #expect(
            running.errorText
                == "appshell: configuration error: environment: APPSHELL_IDLE_TIMEOUT_SECONDS must be an integer from 1 to 86400, got 0\n"
        )
    }

    @Test func aMalformedHostExitsWithStatus2AndOneLine() throws {
        let running = try Self.run(environment: ["APPSHELL_HOST": "127.0.0.256", "APPSHELL_PORT": "0"])
        #expect(running.waitForExit() == 2)
        let message = running.errorText
        #expect(message.hasPrefix("appshell: configuration error: environment: APPSHELL_HOST must be"))
        #expect(message.split(separator: "\n").count == 1)
    }
}

extension CommandTests {
    @Test func aMalformedAllowedHostExitsWithStatus2AndOneLine() throws {
        let running = try Self.run(environment: [
            "APPSHELL_ALLOWED_HOSTS": "app.example.com, bad host", "APPSHELL_PORT": "0",
        ])
        #expect(running.waitForExit() == 2)
        #expect(
            running.errorText
                == "appshell: configuration error: environment: APPSHELL_ALLOWED_HOSTS must be an array of host names "
                + "(no port), IP addresses, or .example.com / *.example.com patterns, got \"bad host\"\n")
    }

    @Test func aMalformedTrustedProxyExitsWithStatus2() throws {
        let running = try Self.run(environment: [
            "APPSHELL_TRUSTED_PROXIES": "10.0.0.0/8,proxy.local", "APPSHELL_PORT": "0",
        ])
        #expect(running.waitForExit() == 2)
        #expect(
            running.errorText.hasSuffix(
                "APPSHELL_TRUSTED_PROXIES must be an array of IPv4 or IPv6 addresses or CIDR ranges such as 10.0.0.0/8, got \"proxy.local\"\n"
            ))
    }

    @Test func onAllInterfacesWithoutAllowedHostsOnlyLoopbackNamesAndAddressesAreServed() throws {
        let running = try Self.run(environment: [
            "APPSHELL_HOST": "0.0.0.0", "APPSHELL_PORT": "0", "APPSHELL_ALLOW_DEMO_ACCOUNT": "true",
        ])
        let port = try running.port()
        let client = TestClient(port: port)
        #expect(try client.get("/healthz", headers: [("Host", "localhost:\(port)")]).status == 200)
        #expect(try client.get("/healthz", headers: [("Host", "10.1.2.3:\(port)")]).status == 200)
        #expect(try client.get("/healthz", headers: [("Host", "rebound.example:\(port)")]).status == 421)
        // The image's health check: HTTP/1.0 without Host.
        #expect(try client.raw(Array("GET /healthz HTTP/1.0\r\n\r\n".utf8)).contains(#"{"status":"ok"}"#))
        running.terminate()
        #expect(running.waitForExit() == 0)
        #expect(running.errorText.hasPrefix("appshell: warning: \"allowedHosts\" is empty"))
    }

    @Test func configuredAllowedHostsAreServed() throws {
        let running = try Self.run(environment: [
            "APPSHELL_HOST": "0.0.0.0", "APPSHELL_PORT": "0", "APPSHELL_ALLOWED_HOSTS": "app.example.com",
            "APPSHELL_ALLOW_DEMO_ACCOUNT": "true",
        ])
        let port = try running.port()
        let client = TestClient(port: port)
        #expect(try client.get("/healthz", headers: [("Host", "app.example.com")]).status == 200)
        #expect(try client.get("/healthz", headers: [("Host", "other.example.com")]).status == 421)
        running.terminate()
        #expect(running.waitForExit() == 0)
        #expect(running.errorText.isEmpty)
    }
}
