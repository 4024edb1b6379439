import Foundation
import Testing

/// Notes' README is the example's own short readme: it runs (its curl walkthrough, in
/// `WalkthroughTests`) and leads to the guide to starting an app, AppShell's Getting Started
/// article, whose code blocks the framework's `DocumentationTests` hold equal to Notes' files.
@Suite struct ReadmeTests {
    /// `Examples/Notes`.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every relative link of the README names a file that is there (the guide among them).
    @Test func theReadmesLinksLeadSomewhere() throws {
        let readme = try Self.read("README.md")
        #expect(readme.contains("Documentation.docc/GettingStarted.md"))
        let targets = readme.components(separatedBy: "](").dropFirst().compactMap { $0.split(separator: ")").first }
            .map { String($0.split(separator: "#", omittingEmptySubsequences: false)[0]) }
            .filter { !$0.hasPrefix("http") && !$0.isEmpty }
        for target in targets {
            let path = Self.packageRoot.appendingPathComponent(target).path
            #expect(FileManager.default.fileExists(atPath: path), "README.md links to \(target), which is not there")
        }
    }

    /// The page script is the framework's: the app keeps no copy of it.
    @Test func theAppKeepsNoCopyOfThePageScript() {
        #expect(!FileManager.default.fileExists(atPath: Self.packageRoot.appendingPathComponent("Public/app.js").path))
    }
}
