import AppShellTesting
import Foundation
import Testing

/// The `notes` command as its README shows it: a configuration error names the key and exits 2,
/// and `hash-password` turns a line of standard input into an Argon2id hash.
@Suite struct CommandTests {
    /// Runs the built `notes` with `arguments`, `environment` and `input` on standard input;
    /// returns its exit status, standard output and standard error.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], input: String = ""
    ) throws -> (
        Int32, String, String
    ) {
        let process = Process()
        process.executableURL = ServerProcess.product("notes")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APPSHELL_") }
            .merging(environment) { _, new in new }
        process.currentDirectoryURL = FileManager.default.temporaryDirectory
        let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output, errors)
    }

    @Test func aValueOutOfRangeStopsTheStartNamingItsKey() throws {
        let (status, _, errors) = try Self.run([], environment: ["APPSHELL_SPLASH_MILLISECONDS": "70000"])
        #expect(status == 2)
        #expect(errors.contains("APPSHELL_SPLASH_MILLISECONDS"))
        #expect(errors.split(separator: "\n").count == 1)
    }

    @Test func hashPasswordPrintsAnArgon2idHash() throws {
        let (status, output, _) = try Self.run(["hash-password"], input: "a passphrase\n")
        #expect(status == 0)
        #expect(output.hasPrefix("$argon2id$"))
        let (empty, _, errors) = try Self.run(["hash-password"], input: "")
        #expect(empty == 2)
        #expect(errors.contains("no password"))
    }
}
