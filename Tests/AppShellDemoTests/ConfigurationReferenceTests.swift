import AppShell
import AppShellDemo
import AppShellJSON
import Foundation
import Testing

/// The Configuration article's tables and the keys in the code are the same: every key of the
/// framework (`ShellConfiguration.keys`) and of the demo (`DemoConfiguration.keys`) is listed once,
/// with its environment variable, its default (applied to a default configuration, it changes
/// nothing) and its range (an integer key's bounds, a choice key's choices); and no key is listed
/// that the code does not have. A key added, removed or changed in the code without the article
/// fails here, naming the row to write.
@Suite struct ConfigurationReferenceTests {
    /// One row of a key table.
    struct Row {
        let name: String
        let variable: String
        let defaultValue: String
        let range: String
        /// Whether it is in the demo's table (the app's own keys) rather than the framework's.
        let isDemos: Bool
    }

    /// The rows of every `| key | variable | default | range | meaning |` table.
    static func rows() throws -> [Row] {
        let text = try DocumentationTests.read("\(DocumentationTests.catalog)/Configuration.md")
        var rows: [Row] = []
        var inTable = false
        var inDemoSection = false
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("### ") { inDemoSection = line.contains("demo") }
            if line == "| key | variable | default | range | meaning |" {
                inTable = true
                continue
            }
            guard inTable, line.hasPrefix("|") else {
                inTable = false
                continue
            }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.first?.hasPrefix("---") == true { continue }
            guard cells.count == 5 else {
                Issue.record("a row without five cells: \(line)")
                continue
            }
            rows.append(
                Row(
                    name: unquoted(cells[0]), variable: unquoted(cells[1]), defaultValue: cells[2], range: cells[3],
                    isDemos: inDemoSection))
        }
        return rows
    }

    /// `text` without the backticks around it.
    static func unquoted(_ text: String) -> String {
        text.hasPrefix("`") && text.hasSuffix("`") && text.count >= 2 ? String(text.dropFirst().dropLast()) : text
    }

    /// The row the article should have for `key`: what a failure suggests.
    static func suggestedRow<Configuration>(_ key: ConfigurationKey<Configuration>) -> String {
        "| `\(key.name)` | `\(key.environmentName)` | DEFAULT | \(range(of: key.kind) ?? "…") | \(key.summary) |"
    }

    /// The range cell an integer, choice or Boolean key must have; `nil`: any text.
    static func range(of kind: ConfigurationKind) -> String? {
        switch kind {
        case .integer(let range): return "\(range.lowerBound)–\(range.upperBound)"
        case .choice(let choices): return choices.map { "`\($0)`" }.joined(separator: ", ")
        case .boolean: return "`true`/`false`"
        default: return nil
        }
    }

    /// The JSON a default cell names: `` `8080` ``, `` `[]` ``, `` `sqlite` ``; the defaults that
    /// depend on the machine, by their words; `nil` for none (the key is unset by default).
    static func defaultValue(_ cell: String) -> JSON? {
        switch cell {
        case "none": return nil
        case "the number of cores": return .integer(AccountsConfiguration.processorCount)
        case "half the cores, at least 1": return .integer(AccountsConfiguration.defaultPasswordCheckThreads)
        default:
            let text = unquoted(cell)
            return (try? JSON(parsing: text)) ?? .string(text)
        }
    }

    @Test func everyKeyIsDocumentedOnceAndNoOtherKeyIs() throws {
        let rows = try Self.rows()
        let framework = ShellConfiguration.keys.map(\.name)
        let demo = DemoConfiguration.keys.map(\.name).filter { !framework.contains($0) }
        #expect(Set(rows.map(\.name)).count == rows.count, "a key is listed twice")
        let documentedFramework = Set(rows.filter { !$0.isDemos }.map(\.name))
        let documentedDemo = Set(rows.filter(\.isDemos).map(\.name))
        for key in ShellConfiguration.keys where !documentedFramework.contains(key.name) {
            Issue.record("Configuration.md lacks the framework's key \(key.name): \(Self.suggestedRow(key))")
        }
        for key in DemoConfiguration.keys where demo.contains(key.name) && !documentedDemo.contains(key.name) {
            Issue.record("Configuration.md lacks the demo's key \(key.name): \(Self.suggestedRow(key))")
        }
        for name in documentedFramework.subtracting(framework) {
            Issue.record("Configuration.md lists \(name), which is not a key of the framework")
        }
        for name in documentedDemo.subtracting(demo) {
            Issue.record("Configuration.md lists \(name) among the demo's keys, which is not one")
        }
    }

    @Test func eachRowHasItsKeysVariableDefaultAndRange() throws {
        let keys = Dictionary(DemoConfiguration.keys.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for row in try Self.rows() {
            guard let key = keys[row.name] else { continue }  // reported by the test above
            #expect(row.variable == key.environmentName, "\(row.name): its variable is \(key.environmentName)")
            if case .choice(let choices) = key.kind {
                let listed = Set(row.range.components(separatedBy: ", ").map(Self.unquoted))
                #expect(listed == Set(choices), "\(row.name): its choices are \(choices), not \(row.range)")
            } else if let range = Self.range(of: key.kind) {
                #expect(row.range == range, "\(row.name): its range is \(range), not \(row.range)")
            }
            guard let value = Self.defaultValue(row.defaultValue) else { continue }
            var configuration = DemoConfiguration()
            do {
                try key.apply(value, to: &configuration, origin: row.name)
            } catch {
                Issue.record("\(row.name): the documented default \(row.defaultValue) is not a valid value: \(error)")
                continue
            }
            #expect(configuration == DemoConfiguration(), "\(row.name): the default is not \(row.defaultValue)")
        }
    }
}
