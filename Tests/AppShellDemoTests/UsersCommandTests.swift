import AppShell
import AppShellDemo
import AppShellTesting
import Foundation
import Testing

/// `appshell users …`, run as the built binary on a temporary SQLite store, as an operator or a
/// script runs it: the password on standard input, the outcome in the exit status.
@Suite struct UsersCommandTests {
    /// What a finished run left: its status and its two outputs.
    struct Outcome {
        let status: Int32
        let output: String
        let errors: String
    }

    /// A store file of the test's own, which every run of it uses.
    final class Store {
        let folder: TemporaryDirectory
        var path: String { folder.path("store.sqlite") }
        init() throws { folder = try TemporaryDirectory("users-command") }
        deinit { folder.remove() }

        /// Runs `appshell users <arguments>` in the package root (its config.json, as serving
        /// reads it) on this store, with `input` on standard input.
        func users(_ arguments: [String], input: String = "") throws -> Outcome {
            let process = Process()
            process.executableURL = ServerProcess.product("appshell")
            process.arguments = ["users"] + arguments
            process.currentDirectoryURL = CommandTests.packageRoot
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APPSHELL_") }
            environment["APPSHELL_STORE_PATH"] = path
            process.environment = environment
            let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = stderr
            try process.run()
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
            // Read to the end before waiting: a full pipe would hold the process.
            let output = stdout.fileHandleForReading.readDataToEndOfFile()
            let errors = stderr.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Outcome(
                status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
                errors: String(decoding: errors, as: UTF8.self))
        }

        /// Opens the store, as the server would, for `body`.
        func withBackend<Result>(_ body: (SQLiteDefaultsBackend) throws -> Result) throws -> Result {
            let backend = try SQLiteDefaultsBackend(path: path)
            defer { backend.close() }
            return try body(backend)
        }
    }

    @Test func addListPasswdAndRemove() throws {
        let store = try Store()
        let added = try store.users(["add", "Ann"], input: "correct horse\n")
        #expect(added.status == 0, "\(added.errors)")
        #expect(added.output == "added ann\n")
        #expect(try store.users(["add", "bob.smith"], input: "battery staple\n").status == 0)
        let listed = try store.users(["list"])
        #expect(listed.status == 0)
        #expect(listed.output == "ann\nbob.smith\n")
        let first = try #require(try store.withBackend { try $0.account(named: "ann") })
        #expect(PasswordHash.verify(password: "correct horse", against: first.passwordHash))

        // Two sessions of ann and one of bob's in the store: passwd ends ann's only.
        let (annsSession, bobsSession) = (SessionID.random(), SessionID.random())
        try store.withBackend { backend throws in
            for (id, user) in [(annsSession, "ann"), (bobsSession, "bob.smith")] {
                var record = SessionRecord(values: ["isLogin": .bool(true)], created: 1, accessed: 2)
                record.user = user
                try backend.save(id, record)
            }
        }
        let changed = try store.users(["passwd", "ANN"], input: "a new passphrase\n")
        #expect(changed.status == 0, "\(changed.errors)")
        #expect(changed.output == "password of ann set; 1 session ended\n")
        try store.withBackend { backend throws in
            let account = try #require(try backend.account(named: "ann"))
            #expect(PasswordHash.verify(password: "a new passphrase", against: account.passwordHash))
            #expect(!PasswordHash.verify(password: "correct horse", against: account.passwordHash))
            #expect(account.created == first.created)
            #expect(try backend.load(annsSession) == nil)
            #expect(try backend.load(bobsSession)?.user == "bob.smith")
            _ = try backend.writeUserStore(UserWrite(user: "bob.smith", values: ["k": .integer(1)], expectedVersion: 0))
        }

        let removed = try store.users(["remove", "bob.smith"])
        #expect(removed.status == 0, "\(removed.errors)")
        #expect(removed.output == "removed bob.smith, its store and 1 session\n")
        try store.withBackend { backend throws in
            #expect(try backend.account(named: "bob.smith") == nil)
            #expect(try backend.load(bobsSession) == nil)
            #expect(try backend.userStore(of: "bob.smith") == UserRecord())
            #expect(try backend.account(named: "ann") != nil)
        }
        #expect(try store.users(["list"]).output == "ann\n")
    }

    @Test func refusalsSayWhyAndExitNonZero() throws {
        let store = try Store()
        #expect(try store.users(["add", "ann"], input: "long enough\n").status == 0)
        let cases: [(arguments: [String], input: String, status: Int32, error: String)] = [
            (["add", "ANN"], "another one\n", 1, "appshell: users add: the user ann exists already\n"),
            (["add", "carol"], "short\n", 1, "appshell: users add: a password has at least 8 characters\n"),
            (
                ["add", "carol"], String(repeating: "é", count: 513) + "\n", 1,
                "appshell: users add: a password has at most 1024 bytes\n"
            ),
            (["add", "carol"], "", 1, "appshell: users add: no password on standard input\n"),
            (
                ["add", "-carol"], "long enough\n", 1,
                "appshell: users add: a user name begins with a letter or a digit\n"
            ),
            (
                ["add", "carol smith"], "long enough\n", 1,
                "appshell: users add: a user name has only the letters a-z, digits, '.', '_' and '-', not U+20\n"
            ),
            (["passwd", "dave"], "long enough\n", 1, "appshell: users passwd: no user dave\n"),
            (["remove", "dave"], "", 1, "appshell: users remove: no user dave\n"),
        ]
        for entry in cases {
            let outcome = try store.users(entry.arguments, input: entry.input)
            #expect(outcome.status == entry.status, "\(entry.arguments)")
            #expect(outcome.errors == entry.error, "\(entry.arguments)")
            #expect(outcome.output == "", "\(entry.arguments)")
        }
        // Nothing of those was made.
        #expect(try store.users(["list"]).output == "ann\n")
        let usage = try store.users(["rename", "ann"])
        #expect(usage.status == 2)
        #expect(usage.errors.hasPrefix("appshell: users: unknown users command rename\nusage: "))
        #expect(try store.users(["add"]).status == 2)
    }

    @Test func endingSessionsWaitsForTheServerServingTheFileToStop() throws {
        let store = try Store()
        #expect(try store.users(["add", "ann"], input: "long enough\n").status == 0)
        var configuration = DemoConfiguration()
        configuration.store = .sqlite
        configuration.storePath = store.path
        var app: DemoServer? = try DemoServer(configuration: configuration)
        // Served: adding and listing are fine, ending sessions is refused and changes nothing.
        #expect(try store.users(["add", "bob"], input: "long enough\n").status == 0)
        for arguments in [["passwd", "ann"], ["remove", "ann"]] {
            let refused = try store.users(arguments, input: "another one\n")
            #expect(refused.status == 1)
            #expect(refused.errors.contains("a server is serving \(store.path); stop it first"), "\(refused.errors)")
        }
        #expect(try store.users(["list"]).output == "ann\nbob\n")
        withExtendedLifetime(app) {}
        app?.server.accounts.passwordChecks.stop()
        app = nil
        // Stopped: it runs.
        #expect(try store.users(["remove", "ann"]).status == 0)
        #expect(try store.users(["list"]).output == "bob\n")
    }
}
