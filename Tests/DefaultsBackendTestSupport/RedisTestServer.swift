import AppShellSessions
import Foundation

/// A real `redis-server` (Debian's) for tests, in a folder of its own under `TMPDIR`.
///
/// `shared()` is the test process's server for the store's tests: started at its first use,
/// listening on a Unix socket (no TCP port to pick or to collide on), without persistence; tests
/// keep apart by key prefix (`uniquePrefix()`). `init(tcp:persistent:)` makes a server of a
/// test's own on a free TCP port, which the test may stop (`kill`) and start again on the same
/// port and files (`start`), with the append-only file synced at every write when `persistent`.
/// A watchdog stops each server and removes its folder once the test process is gone, however it
/// ended; `remove()` does it at once.
public final class RedisTestServer: @unchecked Sendable {
    // @unchecked: `watchdog` is used by the test that owns the server, one thread at a time.

    /// The server of this test process; throws when `redis-server` cannot be started (not installed:
    /// `make test-deps` installs it).
    public static func shared() throws -> RedisTestServer {
        try started.get()
    }

    private static let started: Result<RedisTestServer, any Error> = Result {
        let server = try RedisTestServer(tcp: false, persistent: false)
        RedisTestServer.removeAtExit(server.folder)
        return server
    }

    /// The URL of the server.
    package private(set) var url: RedisURL
    /// Its folder (socket, log, append-only file).
    public let folder: String
    private var arguments: [String] = []
    private var watchdog: Process?

    /// Starts a server: on a Unix socket, or on a free TCP port of 127.0.0.1 (`tcp`); with every
    /// write synced to its append-only file before it is acknowledged (`persistent`), or with no
    /// persistence at all; `extra` goes last on its command line (a cluster node's settings), and
    /// with `clusterBus` a free port of its own for the cluster bus (port + 10000, the default, may
    /// be taken or past 65535). A port found free and taken by another process before the server
    /// bound it (other tests run beside) makes it try again with others, up to 5 times.
    public init(tcp: Bool, persistent: Bool, clusterBus: Bool = false, extra: [String] = []) throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? NSTemporaryDirectory()
        folder = (base.hasSuffix("/") ? base : base + "/") + "appshell-redis-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var common = ["--dir", folder, "--logfile", folder + "/redis.log", "--daemonize", "no"]
        common +=
            persistent
            ? ["--appendonly", "yes", "--appendfsync", "always", "--save", ""] : ["--appendonly", "no", "--save", ""]
        guard tcp else {
            let socket = folder + "/redis.sock"
            url = RedisURL(address: .unix(path: socket))
            arguments = common + ["--port", "0", "--unixsocket", socket, "--unixsocketperm", "700"] + extra
            try start()
            return
        }
        url = RedisURL(address: .tcp(host: "127.0.0.1", port: 0))
        for attempt in 1...5 {
            let port = try RedisTestServer.freePort()
            url = RedisURL(address: .tcp(host: "127.0.0.1", port: port))
            let bus = clusterBus ? ["--cluster-port", String(try RedisTestServer.freePort())] : []
            arguments = common + ["--port", String(port), "--bind", "127.0.0.1"] + extra + bus
            do {
                try start()
                return
            } catch let error as RedisTestServerError where attempt < 5 && error.message.contains("already in use") {
                try? FileManager.default.removeItem(atPath: folder + "/redis.log")
            }
        }
    }

    /// Starts the server (again, after `kill`), with the same port and files; returns once it
    /// answers.
    public func start() throws {
        // The watchdog: redis-server in the background, stopped with SIGKILL once this process
        // is gone (it would never see a SIGTERM: it inherits this process's blocked signals, and
        // the server's threads block SIGTERM to wait for it).
        let script = """
            redis-server "$@" &
            server=$!
            echo "$server" > "$REMOVE/server.pid"
            while kill -0 "$PARENT" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 0.2; done
            kill -KILL "$server" 2>/dev/null; wait "$server" 2>/dev/null
            [ -n "$REMOVE" ] && ! kill -0 "$PARENT" 2>/dev/null && rm -rf "$REMOVE"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "redis-watchdog"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["PARENT": String(getpid()), "REMOVE": folder]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        watchdog = process
        let deadline = Date().addingTimeInterval(10)
        while true {
            if let connection = try? RedisDefaultsBackend(url: url, keyPrefix: "probe:", timeoutMilliseconds: 500) {
                connection.close()
                return
            }
            guard process.isRunning, Date() < deadline else {
                let log = (try? String(contentsOfFile: folder + "/redis.log", encoding: .utf8)) ?? ""
                throw RedisTestServerError(message: "redis-server did not start (make test-deps installs it): \(log)")
            }
            usleep(20_000)
        }
    }

    /// Kills the server at once (SIGKILL: a crash); its files stay for `start`.
    public func kill() {
        guard let watchdog else { return }
        if let text = try? String(contentsOfFile: folder + "/server.pid", encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            Foundation.kill(pid, SIGKILL)
        }
        // The watchdog sees the server gone and ends.
        watchdog.waitUntilExit()
        self.watchdog = nil
    }

    /// Kills the server and removes its folder.
    public func remove() {
        kill()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A key prefix no other test uses.
    public static func uniquePrefix() -> String { "test-\(UUID().uuidString):" }

    /// A backend on this server whose keys start with a prefix of its own.
    package func backend(expiry: RedisDefaultsBackend.Expiry? = nil) throws -> RedisDefaultsBackend {
        try RedisDefaultsBackend(url: url, keyPrefix: RedisTestServer.uniquePrefix(), expiry: expiry)
    }

    /// A TCP port of 127.0.0.1 free now.
    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RedisTestServerError(message: "socket: \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(socket, raw, length) == 0 && getsockname(socket, raw, &length) == 0
            }
        }
        guard bound else { throw RedisTestServerError(message: "no free port: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    nonisolated(unsafe) private static var foldersToRemove: [String] = []

    /// Removes `folder` when the process exits normally, before `without-leftovers` looks at
    /// `TMPDIR` (the watchdog removes it too, a moment later).
    static func removeAtExit(_ folder: String) {
        foldersLock.lock()
        defer { foldersLock.unlock() }
        foldersToRemove.append(folder)
        guard foldersToRemove.count == 1 else { return }
        atexit {
            for folder in RedisTestServer.foldersToRemove { try? FileManager.default.removeItem(atPath: folder) }
        }
    }

    private static let foldersLock = NSLock()
}

/// `redis-server` could not be started.
public struct RedisTestServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    /// The message.
    public var description: String { message }
}
