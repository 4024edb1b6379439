import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The curl walkthrough runs as written, in each document that shows it (the README and the JSON
/// API article): the test reads the `sh` block that defines `act()`, sends each of its requests in
/// order with one cookie jar, as curl would, to the demo with the shipped config.json, and checks
/// each answer against the comment beside it:
///
/// - `# {"key":value,...}`: every key shown has that value in the answer (which is 2xx);
/// - `# 409 on list: {...}`: that status, and the keys shown;
/// - any other comment, or none: the answer is 2xx.
///
/// `sleep N` waits N seconds, as the shell would (the splash's delay is config.json's).
@Suite struct ReadmeWalkthroughTests {
    /// One step of the walkthrough.
    enum Step: CustomStringConvertible {
        case state(expect: String?)
        case act(json: String, expect: String?)
        case sleep(seconds: Double)

        var description: String {
            switch self {
            case .state(let expect): "GET /api/state  # \(expect ?? "")"
            case .act(let json, let expect): "act '\(json)'  # \(expect ?? "")"
            case .sleep(let seconds): "sleep \(seconds)"
            }
        }
    }

    /// The documents that show the walkthrough.
    static let documents = ["README.md", "\(DocumentationTests.catalog)/JSONAPI.md"]

    /// The walkthrough's steps, read from `document`.
    static func steps(in document: String = "README.md") throws -> [Step] {
        let text = try DocumentationTests.read(document)
        let blocks = text.components(separatedBy: "```sh\n").dropFirst().map {
            $0.components(separatedBy: "\n```").first ?? ""
        }
        let block = try #require(blocks.first { $0.contains("act() {") }, "no sh block defines act() in \(document)")
        var steps: [Step] = []
        for line in block.split(separator: "\n").map(String.init) {
            let (command, comment) = split(line)
            if command.hasPrefix("jar=") || command.hasPrefix("act() {") { continue }
            if command.hasPrefix("sleep ") {
                steps.append(.sleep(seconds: try #require(Double(command.dropFirst(6)), "\(line)")))
            } else if command.hasPrefix("curl ") && command.hasSuffix("/api/state") {
                steps.append(.state(expect: comment))
            } else if command.hasPrefix("act '") && command.hasSuffix("'") {
                steps.append(.act(json: String(command.dropFirst(5).dropLast()), expect: comment))
            } else {
                Issue.record("a line of the walkthrough this test does not know how to run: \(line)")
            }
        }
        return steps
    }

    /// A line's command and its comment (after the `#` that follows the command's closing quote or
    /// path), both trimmed.
    static func split(_ line: String) -> (String, String?) {
        guard let hash = line.range(of: "  #") ?? line.range(of: " #") else {
            return (line.trimmingCharacters(in: .whitespaces), nil)
        }
        return (
            String(line[..<hash.lowerBound]).trimmingCharacters(in: .whitespaces),
            String(line[hash.upperBound...]).trimmingCharacters(in: .whitespaces)
        )
    }

    /// Checks `response` against a step's comment.
    static func check(_ response: TestResponse, against comment: String?, step: Step) throws {
        var expectedStatus: Int? = nil
        var shown = comment ?? ""
        if let first = shown.split(separator: " ").first, let status = Int(first) {
            expectedStatus = status
            shown = String(shown.drop { $0 != "{" })
        }
        if let expectedStatus {
            #expect(response.status == expectedStatus, "\(step): \(response.status) \(response.text)")
        } else {
            #expect((200..<300).contains(response.status), "\(step): \(response.status) \(response.text)")
        }
        guard shown.hasPrefix("{") else { return }
        // `{"screen":"main",...}`: the keys shown, the rest elided.
        let keys = try JSON(parsing: shown.replacingOccurrences(of: ",...}", with: "}"))
        for (key, value) in try #require(keys.objectValue, "\(step): the comment is not a JSON object") {
            #expect(response.json[key] == value, "\(step): \(key) is \(response.json[key] ?? .null), not \(value)")
        }
    }

    @Test(arguments: documents, TestMode.allCases)
    func theCurlWalkthroughRunsAsWritten(document: String, mode: TestMode) throws {
        let steps = try Self.steps(in: document)
        #expect(steps.count >= 10, "the walkthrough was not found whole: \(steps)")
        var configuration = try DemoConfiguration.load(
            path: CommandTests.packageRoot.appendingPathComponent("config.json").path, required: true,
            environment: [:])
        configuration.store = .memory
        configuration.publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        let app = try DemoServer(configuration: configuration)
        let server = try TestServer(mode, responder: try app.makeResponder())
        let client = server.client()
        for step in steps {
            switch step {
            case .sleep(let seconds):
                usleep(UInt32(seconds * 1_000_000))
            case .state(let expect):
                try Self.check(try client.get("/api/state"), against: expect, step: step)
            case .act(let json, let expect):
                try Self.check(try client.postJSON("/api/actions", json), against: expect, step: step)
            }
        }
    }
}
