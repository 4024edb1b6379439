import Foundation
import Testing

/// The documentation cannot drift from the code: every Swift block of the README and of the
/// DocC catalog's articles is marked with the file it comes from (`<!-- code: PATH -->` on the
/// line before it, PATH from the repository's root), and that file — compiled by the build or the
/// tests — holds it as written (each line may be indented alike in the file: a block quoted from
/// inside a type is shown without the type's indentation).
@Suite struct DocumentationTests {
    /// The DocC catalog.
    static let catalog = "Sources/AppShell/Documentation.docc"

    /// The text of `path`, from the repository's root.
    static func read(_ path: String) throws -> String {
        try String(contentsOf: CommandTests.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// The catalog's articles, by path from the repository's root.
    static func articles() throws -> [String] {
        let folder = CommandTests.packageRoot.appendingPathComponent(catalog)
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".md") }.sorted()
            .map { "\(catalog)/\($0)" }
    }

    /// The README and every article.
    static func documents() throws -> [String] { ["README.md"] + (try articles()) }

    /// One fenced block: its info string (`swift`, `sh`), its code, and the line before its fence.
    struct Block {
        let language: String
        let code: String
        let lineBefore: String
    }

    /// Every fenced block of `text` (fences of three backticks at the start of a line).
    static func blocks(in text: String) -> [Block] {
        var blocks: [Block] = []
        var open: (language: String, lineBefore: String)? = nil
        var code: [String] = []
        var previous = ""
        for line in text.components(separatedBy: "\n") {
            if let current = open {
                if line == "```" {
                    blocks.append(
                        Block(
                            language: current.language, code: code.joined(separator: "\n"),
                            lineBefore: current.lineBefore))
                    open = nil
                    code = []
                } else {
                    code.append(line)
                }
            } else if line.hasPrefix("```") {
                open = (String(line.dropFirst(3)), previous)
            }
            previous = line
        }
        return blocks
    }

    /// Whether `file` holds `code`'s lines in a row, each with the same indentation added (none
    /// on an empty line) and a line's trailing comment (`  // …`) possibly left out.
    static func holds(_ file: String, _ code: String) -> Bool {
        let lines = code.components(separatedBy: "\n")
        let fileLines = file.components(separatedBy: "\n")
        guard !lines.isEmpty, fileLines.count >= lines.count else { return false }
        for start in 0...(fileLines.count - lines.count) {
            let indent = String(fileLines[start].prefix { $0 == " " })
            let matches = zip(lines, fileLines[start..<(start + lines.count)]).allSatisfy { line, fileLine in
                if line.isEmpty { return fileLine.allSatisfy { $0 == " " } }
                return fileLine == indent + line || fileLine.hasPrefix(indent + line + "  // ")
            }
            if matches { return true }
        }
        return false
    }

    @Test func everySwiftBlockIsCodeThatCompiles() throws {
        var checked = 0
        for document in try Self.documents() {
            for block in Self.blocks(in: try Self.read(document)) where block.language == "swift" {
                let marker = block.lineBefore.trimmingCharacters(in: .whitespaces)
                guard marker.hasPrefix("<!-- code: "), marker.hasSuffix(" -->") else {
                    Issue.record("\(document): a swift block without <!-- code: PATH --> before it:\n\(block.code)")
                    continue
                }
                let path = String(marker.dropFirst("<!-- code: ".count).dropLast(" -->".count))
                let file = try Self.read(path)
                #expect(
                    Self.holds(file, block.code), "\(document): this block is not in \(path) as written:\n\(block.code)"
                )
                checked += 1
            }
        }
        #expect(checked >= 25, "only \(checked) blocks were found")
    }

    /// Every article is curated under the root page's topics, so none is left unreachable.
    @Test func everyArticleIsListedOnTheRootPage() throws {
        let root = try Self.read("\(Self.catalog)/AppShell.md")
        for article in try Self.articles() where !article.hasSuffix("/AppShell.md") {
            let name = URL(fileURLWithPath: article).deletingPathExtension().lastPathComponent
            #expect(root.contains("- <doc:\(name)>"), "AppShell.md does not list \(name)")
        }
    }

    /// The README is the front door, not the manual: short, and every link into the catalog
    /// names an article that exists.
    @Test func theReadmeIsShortAndItsLinksLeadSomewhere() throws {
        let readme = try Self.read("README.md")
        #expect(readme.components(separatedBy: "\n").count <= 300)
        let targets = readme.components(separatedBy: "](").dropFirst().compactMap { $0.split(separator: ")").first }
            .map { String($0.split(separator: "#", omittingEmptySubsequences: false)[0]) }
            .filter { !$0.hasPrefix("http") && !$0.isEmpty }
        #expect(targets.count >= 10)
        for target in targets {
            let path = CommandTests.packageRoot.appendingPathComponent(target).path
            #expect(FileManager.default.fileExists(atPath: path), "README links to \(target), which is not there")
        }
    }

    /// The README names every Debian package `make run` and `make test` install: the Makefile's
    /// `DEB_PACKAGES` and `TEST_PACKAGES` are the truth.
    @Test func theReadmeNamesThePackagesTheTwoCommandsInstall() throws {
        let makefile = try Self.read("Makefile").components(separatedBy: "\n")
        func packages(_ variable: String) -> [String] {
            let line = makefile.first { $0.hasPrefix("\(variable) :=") } ?? ""
            return line.dropFirst(variable.count + 3).split(separator: " ").map(String.init).filter {
                !$0.hasPrefix("$(")
            }
        }
        let listed = packages("DEB_PACKAGES") + packages("TEST_PACKAGES")
        #expect(listed.count >= 10)
        let readme = try Self.read("README.md")
        let section = try #require(readme.components(separatedBy: "## The two commands").dropFirst().first)
            .components(separatedBy: "\n## ")[0]
        for package in listed { #expect(section.contains("`\(package)`"), "README does not name \(package)") }
    }

    /// What the documents must not cite: a design file that is not in the repository, the seeds
    /// by number, or names the code no longer has.
    @Test func theDocumentsCiteNothingThatIsNotThere() throws {
        let stale = [#"\bDESIGN\.md"#, #"\b[Ss]eed 0\d\d"#, #"\bPageRenderer\b"#, #"\bShellSession\b"#]
        for document in try Self.documents() + ["Examples/Notes/README.md", "docs/browser-contract.md"] {
            let text = try Self.read(document)
            for word in stale { #expect(!text.contains(try Regex(word)), "\(document) cites \(word)") }
        }
    }
}
