import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension SQLiteConnection {
    /// The 16 bytes every SQLite 3 database file begins with.
    fileprivate static let header = Array("SQLite format 3\0".utf8)

    /// Refuses, without writing to it, an existing file at `path` that this process cannot read
    /// and write, or that is not empty and does not begin with SQLite's header. SQLite would open
    /// a write-protected file read-only (leaving `-wal` and `-shm` files beside it) and takes a
    /// file of one byte for an empty database, writing a new one over it. An empty file (0 bytes)
    /// is an empty database, as SQLite says; a missing one is created by `init`.
    static func checkFile(at path: String) throws(StoreError) {
        let file = open(path, O_RDWR | O_CLOEXEC)
        guard file >= 0 else {
            let code = errno
            guard code != ENOENT else { return }
            let readOnly = code == EACCES && access(path, R_OK) == 0 ? "it is read-only for this user: " : ""
            throw StoreError(
                "store \(path): cannot open it for reading and writing: \(readOnly)\(String(cString: strerror(code))); "
                    + "it was left as it is")
        }
        defer { closeDescriptor(file) }
        var start = [UInt8](repeating: 0, count: header.count)
        var count = 0
        while count < start.count {
            let got = start.withUnsafeMutableBytes { read(file, $0.baseAddress! + count, $0.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        guard count > 0, start[..<count] != header[...] || count < header.count else { return }
        let why =
            count < header.count
            ? "it holds \(count) byte\(count == 1 ? "" : "s"), fewer than SQLite's header"
            : "it does not begin with SQLite's header"
        throw StoreError(
            "store \(path): file is not a database: \(why) (\(codeLabel(SQLITE_NOTADB))); "
                + "it is not a session store, or it is damaged, and was left as it is")
    }
}

extension SQLiteConnection {
    /// Creates an empty file at `path`, readable and writable by its owner only, when there is
    /// none. SQLite would create it with 0644 (less the umask), readable by every user of the
    /// machine, and makes its `-wal` and `-shm` files with the database file's mode: created here
    /// first, all three are 0600. An empty file is an empty database to SQLite.
    static func createOwnerOnly(at path: String) throws(StoreError) {
        let file = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard file < 0 else { return closeDescriptor(file) }
        let code = errno
        // Another process creating it at the same moment made it the same way.
        guard code != EEXIST else { return }
        throw StoreError("store \(path): cannot create it: \(String(cString: strerror(code)))")
    }

    /// Takes away every permission of the group and others on the store's file, its `-wal` and
    /// its `-shm` (those that exist): a store written by an older version was created 0644.
    static func restrictToOwner(_ path: String) throws(StoreError) {
        for file in [path, path + "-wal", path + "-shm"] {
            var status = stat()
            guard stat(file, &status) == 0 else { continue }
            guard chmod(file, status.st_mode & 0o700) == 0 else {
                throw StoreError(
                    "store \(file): cannot make it readable by its owner only: \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// `close(2)`, named apart from `SQLiteConnection.close()`.
private func closeDescriptor(_ descriptor: Int32) { close(descriptor) }
