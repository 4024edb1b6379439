import AppShellSessions
import Foundation

/// A real `redis-server` (Debian's) for the tests of a test process: started at its first use,
/// listening on a Unix socket in a folder of its own under `TMPDIR` (no TCP port to pick or to
/// collide on), without persistence. Tests share it and keep apart by key prefix
/// (`RedisTestServer.uniquePrefix()`). A watchdog stops it, and removes its folder, once the
/// test process is gone — however it ended.
public final class RedisTestServer: Sendable {
    /// The server of this test process; throws when `redis-server` cannot be started (not installed:
    /// `make test-deps` installs it).
    public static func shared() throws -> RedisTestServer {
        try started.get()
    }

    private static let started: Result<RedisTestServer, any Error> = Result { try RedisTestServer() }

    /// The URL of the server's socket.
    public let url: RedisURL
    /// Its folder (socket, log).
    public let folder: String

    private init() throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? NSTemporaryDirectory()
        folder = (base.hasSuffix("/") ? base : base + "/") + "appshell-redis-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let socket = folder + "/redis.sock"
        url = try RedisURL("unix://" + socket)
        // The watchdog: redis-server in the background, stopped and its folder removed once this
        // process no longer exists. Stopped with SIGKILL (it keeps nothing): it inherits this
        // process's blocked signals, SIGTERM among them (the server's threads wait for it), and
        // would never see a SIGTERM.
        let script = """
            redis-server --port 0 --unixsocket "$1" --unixsocketperm 700 --save '' --appendonly no \
              --dir "$2" --logfile "$2/redis.log" --daemonize no &
            server=$!
            while kill -0 "$3" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 0.2; done
            kill -KILL "$server" 2>/dev/null; wait "$server" 2>/dev/null
            rm -rf "$2"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "redis-watchdog", socket, folder, String(getpid())]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) {
            guard process.isRunning, Date() < deadline else {
                let log = (try? String(contentsOfFile: folder + "/redis.log", encoding: .utf8)) ?? ""
                throw RedisTestServerError(message: "redis-server did not start (make test-deps installs it): \(log)")
            }
            usleep(20_000)
        }
        // Removed by the watchdog at exit; also when the process ends normally, before
        // `without-leftovers` looks at TMPDIR.
        let folder = folder
        RedisTestServer.folderToRemove = folder
        atexit {
            if let folder = RedisTestServer.folderToRemove {
                // The socket's removal stops nothing; the watchdog sees this process gone and stops
                // the server. The folder goes now so that the test run leaves nothing behind.
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
    }

    nonisolated(unsafe) private static var folderToRemove: String?

    /// A key prefix no other test uses.
    public static func uniquePrefix() -> String { "test-\(UUID().uuidString):" }

    /// A backend on this server whose keys start with a prefix of its own.
    public func backend(expiry: RedisDefaultsBackend.Expiry? = nil) throws -> RedisDefaultsBackend {
        try RedisDefaultsBackend(url: url, keyPrefix: RedisTestServer.uniquePrefix(), expiry: expiry)
    }
}

/// `redis-server` could not be started.
public struct RedisTestServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    /// The message.
    public var description: String { message }
}
