#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether a server is serving a SQLite store: the server holds a shared lock on a file beside the
/// store (`<store>.serving`) for as long as it runs, and `appshell users passwd|remove` asks for
/// it alone. A running server keeps the sessions it holds in memory and would not see another
/// process end them in the file (it could even write one back), so those commands refuse while it
/// runs: the operator stops it first, or ends the sessions from the account screen.
package final class SQLiteServingLock: Sendable {
    /// The lock file's descriptor, held open (and locked) until `deinit`.
    private let descriptor: Int32

    /// The lock file of the store at `storePath`.
    package static func path(besides storePath: String) -> String { storePath + ".serving" }

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// A server's lock on the store at `storePath`, shared with any other holder; throws when the
    /// lock file cannot be opened.
    package static func serving(_ storePath: String) throws(StoreError) -> SQLiteServingLock {
        try lock(storePath, LOCK_SH)
    }

    /// The lock for a command that must run alone on the store at `storePath`; `nil` while a
    /// server holds it. Throws when the lock file cannot be opened.
    package static func alone(_ storePath: String) throws(StoreError) -> SQLiteServingLock? {
        do {
            return try lock(storePath, LOCK_EX | LOCK_NB)
        } catch  where error.retryAfterSeconds != nil {
            return nil
        }
    }

    private static func lock(_ storePath: String, _ operation: Int32) throws(StoreError) -> SQLiteServingLock {
        let file = path(besides: storePath)
        let descriptor = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError("cannot open \(file): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, operation) == 0 else {
            let reason = errno
            close(descriptor)
            if reason == EWOULDBLOCK { throw StoreError("\(file) is locked", retryAfterSeconds: 1) }
            throw StoreError("cannot lock \(file): \(String(cString: strerror(reason)))")
        }
        return SQLiteServingLock(descriptor: descriptor)
    }
}
