import AppShellJSON
import AppShellTesting
import Foundation
import NotesApp
import Testing

/// The README's curl walkthrough runs as written, with the shipped config.json: each `curl` of
/// `/api/state` and each `act '…'` in order with one cookie jar, `sleep N` as the shell would,
/// and each answer checked against its comment — `# {"key":value,...}`: those keys have those
/// values (and the answer is 2xx); `# 422 on compose: {...}`: that status and those keys; no
/// comment: 2xx.
@Suite struct WalkthroughTests {
    enum Step {
        case state(String?)
        case act(String, String?)
        case sleep(Double)
    }

    static func steps() throws -> [Step] {
        let readme = try ReadmeTests.read("README.md")
        let block = try #require(
            readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
                .first { $0.contains("act() {") })
        return try block.split(separator: "\n").compactMap { line -> Step? in
            let parts = line.components(separatedBy: "  #")
            let command = parts[0].trimmingCharacters(in: .whitespaces)
            let comment = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
            if command.hasPrefix("jar=") || command.hasPrefix("act() {") { return nil }
            if command.hasPrefix("sleep ") { return .sleep(try #require(Double(command.dropFirst(6)))) }
            if command.hasPrefix("curl ") && command.hasSuffix("/api/state") { return .state(comment) }
            if command.hasPrefix("act '") && command.hasSuffix("'") {
                return .act(String(command.dropFirst(5).dropLast()), comment)
            }
            Issue.record("a line this test cannot run: \(line)")
            return nil
        }
    }

    static func check(_ response: TestResponse, _ comment: String?, _ step: String) throws {
        var shown = comment ?? ""
        if let status = shown.split(separator: " ").first.flatMap({ Int($0) }) {
            #expect(response.status == status, "\(step): \(response.status) \(response.text)")
            shown = String(shown.drop { $0 != "{" })
        } else {
            #expect((200..<300).contains(response.status), "\(step): \(response.status) \(response.text)")
        }
        guard shown.hasPrefix("{") else { return }
        let keys = try JSON(parsing: shown.replacingOccurrences(of: ",...}", with: "}"))
        for (key, value) in keys.objectValue ?? [:] {
            #expect(response.json[key] == value, "\(step): \(key) is \(response.json[key] ?? .null), not \(value)")
        }
    }

    @Test(arguments: TestMode.allCases)
    func theCurlWalkthroughRunsAsWritten(mode: TestMode) throws {
        let steps = try Self.steps()
        #expect(steps.count >= 12)
        var configuration = try NotesConfiguration.load(
            path: ReadmeTests.packageRoot.appendingPathComponent("config.json").path, required: true, environment: [:])
        configuration.shell.store = .memory
        configuration.shell.publicDirectory = NotesHarness.publicDirectory
        let app = try NotesServer(configuration: configuration)
        defer { app.server.stop() }
        let server = try TestServer(mode, responder: try app.server.makeResponder())
        defer { server.stop() }
        let client = server.client()
        for step in steps {
            switch step {
            case .sleep(let seconds):
                Thread.sleep(forTimeInterval: seconds)
            case .state(let comment):
                try Self.check(try client.get("/api/state"), comment, "GET /api/state")
            case .act(let json, let comment):
                try Self.check(try client.act(json), comment, json)
            }
        }
    }
}
