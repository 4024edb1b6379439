import AppShellJSON
import AppShellTesting
import Foundation
import Synchronization
import Testing

/// The `appshell` executable itself: configuration errors, serving, SIGTERM.
@Suite struct CommandTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The built `appshell` next to the test bundle.
    static var executable: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("appshell")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return packageRoot.appendingPathComponent(".build/debug/appshell")
    }

    /// A running `appshell` with its output pipes.
    final class Running {
        let process = Process()
        let output = Pipe()
        let errors = Pipe()

        init(arguments: [String], environment: [String: String] = [:]) throws {
            process.executableURL = CommandTests.executable
            process.arguments = arguments
            process.currentDirectoryURL = CommandTests.packageRoot
            var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APPSHELL_") }
            merged.merge(environment) { _, new in new }
            process.environment = merged
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        /// Reads standard output up to the `listening` event and returns its port.
        func port() throws -> Int {
            var buffered = Data()
            let handle = output.fileHandleForReading
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { throw TestClientError(description: "appshell exited before listening") }
                buffered.append(chunk)
                for line in String(decoding: buffered, as: UTF8.self).split(separator: "\n") {
                    let event = (try? JSON(parsing: String(line))) ?? .null
                    if event["event"]?.stringValue == "listening", let port = event["port"]?.integerValue {
                        return port
                    }
                }
            }
        }

        func waitForExit() -> Int32 {
            process.waitUntilExit()
            return process.terminationStatus
        }

        var errorText: String { String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }

        deinit { if process.isRunning { process.terminate() } }
    }

    @Test func configurationErrorsExitWithStatus2AndOneLine() throws {
        let path = NSTemporaryDirectory() + "appshell-bad-\(UUID().uuidString).json"
        try #"{"port": 80, "colour": "blue"}"#.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let running = try Running(arguments: ["--config", path])
        #expect(running.waitForExit() == 2)
        #expect(running.errorText == "appshell: configuration error: \(path): unknown key \"colour\"\n")
    }

    @Test func wrongTypeInTheEnvironmentExitsWithStatus2() throws {
        let running = try Running(arguments: [], environment: ["APPSHELL_PORT": "http"])
        #expect(running.waitForExit() == 2)
        #expect(
            running.errorText
                == "appshell: configuration error: environment: APPSHELL_PORT must be an integer from 0 to 65535, got \"http\"\n"
        )
    }

    @Test func unknownArgumentExitsWithStatus2() throws {
        let running = try Running(arguments: ["--colour"])
        #expect(running.waitForExit() == 2)
        #expect(running.errorText.hasPrefix("appshell: unknown argument --colour"))
    }

    @Test func servesHealthAndStaticFilesThenStopsOnSIGTERM() throws {
        let running = try Running(arguments: [], environment: ["APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "true"])
        let port = try running.port()
        let client = TestClient(port: port)
        let health = try client.get("/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"ok"}"#)
        let index = try client.get("/")
        #expect(index.status == 200)
        #expect(index.headers["Content-Type"] == "text/html; charset=utf-8")
        running.process.terminate()
        #expect(running.waitForExit() == 0)
        let log = String(decoding: running.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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
        let running = try Running(arguments: [], environment: ["APPSHELL_PORT": "0"])
        let port = try running.port()
        // A request whose body is only half sent is in flight when SIGTERM arrives.
        let body = #"{"a":1}"#
        let client = TestClient(port: port)
        let finished = DispatchSemaphore(value: 0)
        let answer = Mutex("")
        let head =
            "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n{\"a\""
        let connection = try RawConnection(port: port)
        try connection.send(head)
        usleep(200_000)
        running.process.terminate()
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
}
