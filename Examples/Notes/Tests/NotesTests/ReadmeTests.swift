import Foundation
import Testing

/// Notes' README is the guide to starting an app: each `swift` block it marks with
/// `<!-- code: PATH -->` must be in that file as written, so the guide's code compiles and runs.
@Suite struct ReadmeTests {
    /// `Examples/Notes`.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every marked block: the file it names and its code.
    static func blocks() throws -> [(path: String, code: String)] {
        try read("README.md").components(separatedBy: "<!-- code: ").dropFirst().map { part in
            let path = try #require(part.components(separatedBy: " -->\n```swift\n").first)
            let rest = try #require(part.components(separatedBy: " -->\n```swift\n").dropFirst().first)
            return (path, try #require(rest.components(separatedBy: "\n```").first))
        }
    }

    @Test func theGuidesCodeIsTheAppsCode() throws {
        let blocks = try Self.blocks()
        #expect(blocks.count >= 10)
        for (path, code) in blocks {
            #expect(try Self.read(path).contains(code), "README.md's block from \(path) is not in that file")
        }
    }

    /// The page script is the framework's: the app keeps no copy of it.
    @Test func theAppKeepsNoCopyOfThePageScript() {
        #expect(!FileManager.default.fileExists(atPath: Self.packageRoot.appendingPathComponent("Public/app.js").path))
    }
}
