import AppShellConcurrency
import AppShellJSON
import Foundation

/// A built executable of this package run as a child process, with its output captured: for
/// tests that stop a server with SIGTERM or SIGKILL and start it again.
public final class ServerProcess: @unchecked Sendable {
    // @unchecked: used from the test thread that made it; Process and Pipe are thread-safe enough
    // for start, signal and wait.
    /// The child process.
    public let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffered = Data()
    /// What `collectOutput` read, and whether it reached the end.
    private let collected = Locked<(data: Data, ended: Bool)>((Data(), false))
    private var collecting = false
    /// Removed when this value is released (the process's own files).
    private let ownedDirectory: TemporaryDirectory?

    /// The path of the product `name` built beside the test bundle (`.build/<config>/name`).
    public static func product(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `product` with `arguments` in `directory`; `APPSHELL_*` variables of the test's own
    /// environment are removed and `environment` is added. A `launcher` (a program and its
    /// arguments, such as `setpriv --reuid=…`) runs the product in its turn. `owning` is removed
    /// when this value is released: a folder made for the process alone (its store).
    public init(
        product: String, arguments: [String] = [], environment: [String: String] = [:], directory: URL? = nil,
        launcher: [String] = [], owning ownedDirectory: TemporaryDirectory? = nil
    ) throws {
        self.ownedDirectory = ownedDirectory
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [ServerProcess.product(product).path] + arguments
        } else {
            process.executableURL = ServerProcess.product(product)
            process.arguments = arguments
        }
        if let directory { process.currentDirectoryURL = directory }
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APPSHELL_") }
        merged.merge(environment) { _, new in new }
        process.environment = merged
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Reads standard output up to the `{"event":"listening"}` line and returns its port.
    public func port() throws -> Int {
        let handle = output.fileHandleForReading
        while true {
            if let port = listeningPort() { return port }
            let chunk = handle.availableData
            if chunk.isEmpty { throw TestClientError(description: "the server exited before listening: \(errorText)") }
            buffered.append(chunk)
        }
    }

    private func listeningPort() -> Int? {
        for line in String(decoding: buffered, as: UTF8.self).split(separator: "\n") {
            let event = (try? JSON(parsing: String(line))) ?? .null
            if event["event"]?.stringValue == "listening" { return event["port"]?.integerValue }
        }
        return nil
    }

    /// Sends SIGTERM.
    public func terminate() { process.terminate() }

    /// Sends SIGKILL: the process dies without running any code of its own.
    public func kill() { Foundation.kill(process.processIdentifier, SIGKILL) }

    /// Waits for the process to end and returns its exit status (or signal number).
    public func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits at most `seconds` for the process to end and returns its exit status (or signal
    /// number); `nil` when it was still running, after killing it (SIGKILL).
    public func waitForExit(seconds: Double) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            kill()
            process.waitUntilExit()
            return nil
        }
        return waitForExit()
    }

    /// Everything written to standard error (waits for the process to close it).
    public var errorText: String { String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }

    /// Reads standard output on a thread of its own from now on, so that a process writing much
    /// (an access log under load) never blocks on a full pipe; `outputText` returns it all.
    public func collectOutput() {
        collecting = true
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [collected] in
            while true {
                let chunk = handle.availableData
                collected.withLock {
                    $0.data.append(chunk)
                    if chunk.isEmpty { $0.ended = true }
                }
                if chunk.isEmpty { return }
            }
        }
    }

    /// Everything written to standard output after what `port()` read (waits for the process to
    /// close it).
    public var outputText: String {
        guard collecting else {
            return String(decoding: buffered + output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        while !collected.withLock({ $0.ended }) { usleep(10_000) }
        return String(decoding: buffered + collected.withLock { $0.data }, as: UTF8.self)
    }

    deinit {
        if process.isRunning {
            kill()
            process.waitUntilExit()
        }
        ownedDirectory?.remove()
    }
}
