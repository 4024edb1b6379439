import AppShellSessions
import AppShellTesting
import Foundation
import Testing

/// The store's file damaged or replaced while the server was stopped: the `appshell` process
/// stops its start with one line on standard error and exit status 1, and leaves the file (and the
/// folder it is in) exactly as it was — no new database over it, no `-wal`, `-shm` or `-journal`
/// beside it, no key file.
@Suite struct StoreFileFaultTests {
    /// One way a store's file can be wrong, made in an empty folder at `path`.
    struct Fault: CustomTestStringConvertible, Sendable {
        let name: String
        /// Runs the server as this user (`setpriv`): root reads and writes whatever the mode says.
        var user: String? = nil
        let make: @Sendable (_ path: String) throws -> Void

        var testDescription: String { name }
    }

    /// A real session store of about a dozen pages, closed (checkpointed into the file).
    static func realStore() throws -> Data {
        let folder = NSTemporaryDirectory() + "appshell-store-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/store.sqlite"
        do {
            let backend = try SQLiteDefaultsBackend(path: path)
            let record = SessionRecord(
                values: ["isLogin": .bool(true), "username": .string(String(repeating: "x", count: 600))],
                created: 1_700_000_000, accessed: 1_700_000_000)
            for _ in 0..<40 { try backend.save(SessionID.random(), record) }
        }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    static func write(_ data: Data, _ path: String) throws { try data.write(to: URL(fileURLWithPath: path)) }

    static func truncated(to length: Int) -> Fault {
        Fault(name: "a store truncated to \(length) bytes") { try write(realStore().prefix(length), $0) }
    }

    static let faults: [Fault] = [
        Fault(name: "garbage") { path in
            try write(Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }), path)
        },
        Fault(name: "text") { try write(Data(String(repeating: "not a database\n", count: 300).utf8), $0) },
        Fault(name: "4096 zeros") { try write(Data(count: 4096), $0) },
        // SQLite takes a file of one byte for an empty database and wrote a new one over it.
        Fault(name: "one zero byte") { try write(Data(count: 1), $0) },
        Fault(name: "the first byte of a store") { try write(realStore().prefix(1), $0) },
        truncated(to: 10), truncated(to: 100), truncated(to: 4096), truncated(to: 10_000),
        Fault(name: "a store with a page overwritten") { path in
            var bytes = try realStore()
            bytes.replaceSubrange(4096..<4096 + 512, with: Data(repeating: 0xA5, count: 512))
            try write(bytes, path)
        },
        Fault(name: "a store whose header names a newer schema") { path in
            var bytes = try realStore()
            // The user version (PRAGMA user_version) is the big-endian integer at offset 60.
            bytes.replaceSubrange(60..<64, with: [0, 0, 0, 99])
            try write(bytes, path)
        },
        Fault(name: "a directory") {
            try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: false)
        },
        Fault(name: "a store without read permission", user: "nobody") { path in
            try write(realStore(), path)
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path)
        },
        Fault(name: "a store without write permission", user: "nobody") { path in
            try write(realStore(), path)
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        },
    ]

    /// What the folder holds: every name with its bytes (a folder's as its listing).
    static func contents(of folder: String) throws -> [String: Data] {
        var found: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            let path = folder + "/" + name
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            found[name] =
                isDirectory.boolValue
                ? Data(try FileManager.default.contentsOfDirectory(atPath: path).sorted().joined(separator: "/").utf8)
                : try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return found
    }

    @Test(arguments: faults) func aDamagedStoreStopsTheStartWithOneLineAndIsLeftAsItWas(_ fault: Fault) throws {
        let folder = NSTemporaryDirectory() + "appshell-fault-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/store.sqlite"
        try fault.make(path)
        var launcher: [String] = []
        if let user = fault.user {
            guard geteuid() == 0 else {
                print("SKIPPED \(fault.name): changing the user needs root")
                return
            }
            // The folder is the new user's, as a deployment's data folder is; the file is not.
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder)
            launcher = ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=nogroup", "--clear-groups", "--"]
        }
        let before = try Self.contents(of: folder)
        let running = try ServerProcess(
            product: "appshell",
            environment: ["APPSHELL_STORE_PATH": path, "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "false"],
            directory: CommandTests.packageRoot, launcher: launcher)
        let status = running.waitForExit(seconds: 30)
        #expect(status == 1, "\(fault.name): the server started, or exited \(String(describing: status))")
        let message = running.errorText
        #expect(message.hasPrefix("appshell: cannot start: store \(path): "), "\(message)")
        #expect(message.hasSuffix("\n") && message.split(separator: "\n").count == 1, "not one line: \(message)")
        #expect(!running.outputText.contains("listening"))
        #expect(try Self.contents(of: folder) == before, "\(fault.name): the folder changed")
    }

    /// An empty file (0 bytes) is what SQLite calls an empty database: the store starts in it.
    @Test func anEmptyFileIsAnEmptyStore() throws {
        let folder = NSTemporaryDirectory() + "appshell-fault-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/store.sqlite"
        try Self.write(Data(), path)
        let running = try ServerProcess(
            product: "appshell", environment: ["APPSHELL_STORE_PATH": path, "APPSHELL_PORT": "0"],
            directory: CommandTests.packageRoot)
        let client = TestClient(port: try running.port())
        #expect(try client.get("/healthz").status == 200)
        running.terminate()
        #expect(running.waitForExit(seconds: 30) == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).starts(with: Array("SQLite format 3\0".utf8)))
    }
}
