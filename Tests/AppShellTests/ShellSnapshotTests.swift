import AppShell
import AppShellJSON
import Testing

/// A kept snapshot's bytes — written member by member, without the dictionary `json` builds — are
/// exactly `serialized`'s, whatever parts it has.
@Suite struct ShellSnapshotTests {
    static let records: [LifecycleRecord] = (0..<60).map { index in
        index % 7 == 0 ? .completion(.push) : .screen("screen\(index % 5)", .viewDidAppear)
    }

    static var variants: [ShellSnapshot] {
        var made: [ShellSnapshot] = []
        let coordinators: [JSON] = [[:], ["name": "app", "children": [["name": "main", "children": []]]]]
        let extras: [JSON] = [.null, ["splashStartedAt": 1_800_000_000_000, "note": "a \"quoted\" ü"]]
        let transitions: [LastTransition?] = [
            nil, LastTransition(kind: .push, animated: true), LastTransition(kind: .dismiss, animated: false),
        ]
        for channel in [nil, "c", "a\"b\\\n"] as [String?] {
            for presented in [nil, "login"] as [String?] {
                for transition in transitions {
                    for (index, records) in [[], Self.records].enumerated() {
                        made.append(
                            ShellSnapshot(
                                root: index == 0 ? "splash" : "navigation",
                                stack: index == 0 ? [] : ["main", "list", "é"], presented: presented,
                                coordinators: coordinators[index], log: LifecycleLog(records: records),
                                version: index == 0 ? 0 : 123_456, extra: extras[index], channel: channel,
                                transition: transition))
                    }
                }
            }
        }
        return made
    }

    @Test func keptBytesAreTheSerializedOnes() throws {
        for snapshot in Self.variants {
            let kept = snapshot.kept
            #expect(!kept.isSerialized)
            #expect(kept.bytes == snapshot.json.serialized)
            #expect(kept.bytes == snapshot.serialized)
            // And they read back as the snapshot.
            #expect(ShellSnapshot(json: try JSON(parsing: kept.bytes)) == snapshot)
        }
    }

    @Test func aSnapshotWithoutALogIsKeptToo() {
        var snapshot = Self.variants[Self.variants.count - 1]
        snapshot.lifecycle = [.completion(.pop)]
        #expect(snapshot.kept.bytes == snapshot.json.serialized)
    }
}
