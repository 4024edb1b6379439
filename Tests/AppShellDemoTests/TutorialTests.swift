import Foundation
import Testing

/// The README's tutorial quotes the demo's own code: it must stay the same as the sources.
@Suite struct TutorialTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: CommandTests.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    static func marked(_ text: String, _ tag: String) throws -> String {
        let begin = try #require(text.range(of: "// tutorial:\(tag):begin\n"))
        let end = try #require(text.range(of: "// tutorial:\(tag):end"))
        return String(text[begin.upperBound..<end.lowerBound])
    }

    @Test(arguments: [
        ("screen", "Sources/AppShellDemo/SecondScreen.swift"),
        ("coordinator", "Sources/AppShellDemo/SecondCoordinator.swift"),
    ])
    func theTutorialCodeIsTheDemosCode(tag: String, path: String) throws {
        let code = try Self.marked(try Self.read(path), tag)
        #expect(code.count > 200)
        #expect(try Self.read("README.md").contains("```swift\n" + code + "```"))
    }
}
