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

    /// A snapshot whose records were set (not taken from a log) writes each record's shared code:
    /// names that need escapes, names met again after others, every event and every transition
    /// kind — the bytes are still `json`'s, and read back as the records.
    @Test func everyLogIsWrittenAsItsCodesWhateverItsNames() throws {
        let names =
            (0..<40).map { "s\($0)" } + [
                "a\"b", "<x&y>", "\\", "é", "tab\t", "a-very-long-screen-name-of-more-than-15-bytes",
            ]
        var records: [LifecycleRecord] = []
        for (index, name) in names.enumerated() {
            records.append(.screen(name, LifecycleEvent.allCases[index % LifecycleEvent.allCases.count]))
            records.append(.screen(names[(index * 7) % names.count], .viewWillAppear))
            if index % 3 == 0 { records.append(.completion([.root, .push, .pop, .present, .dismiss][index % 5])) }
        }
        var snapshot = Self.variants[Self.variants.count - 1]
        for count in [1, 2, 17, 50, records.count] {
            snapshot.lifecycle = Array(records.prefix(count))
            let bytes = snapshot.kept.bytes
            #expect(bytes == snapshot.json.serialized)
            #expect(ShellSnapshot(json: try JSON(parsing: bytes))?.lifecycle == snapshot.lifecycle)
        }
    }

    @Test func aSnapshotWithoutALogIsKeptToo() {
        var snapshot = Self.variants[Self.variants.count - 1]
        snapshot.lifecycle = [.completion(.pop)]
        #expect(snapshot.kept.bytes == snapshot.json.serialized)
    }

    /// Format 1, as stored before the compact log (a row of the demo, its log cut to four
    /// records): it still loads, as the snapshot it was.
    static let storedInFormat1 = """
        {"channel":"abc","coordinators":{"children":[{"children":[],"name":"main"}],"name":"app"},"extra":{},\
        "lifecycle":[{"event":"completion","transition":"push"},{"event":"viewWillDisappear","screen":"list"},\
        {"event":"viewDidLoad","screen":"main"},{"event":"removeFromParent","screen":"c\\"x"}],\
        "presented":null,"root":"main","stack":["main"],"transition":{"animated":true,"kind":"pop"},"version":42}
        """

    @Test func aSnapshotStoredInFormat1StillLoads() throws {
        let loaded = try #require(ShellSnapshot(json: try JSON(parsing: Array(Self.storedInFormat1.utf8))))
        let expected = ShellSnapshot(
            root: "main", stack: ["main"], presented: nil,
            coordinators: ["name": "app", "children": [["name": "main", "children": []]]],
            lifecycle: [
                .completion(.push), .screen("list", .viewWillDisappear), .screen("main", .viewDidLoad),
                .screen("c\"x", .removeFromParent),
            ],
            version: 42, extra: [:], channel: "abc", transition: LastTransition(kind: .pop, animated: true))
        #expect(loaded == expected)
        // Stored again, it takes format 2, and reads back the same; every variant does too.
        let stored = try JSON(parsing: loaded.serialized)
        #expect(stored["format"] == 2)
        #expect(stored["lifecycle"] == nil)
        #expect(stored["log"] == ["pushc", "listx", "mainl", "c\"xr"])
        #expect(ShellSnapshot(json: stored) == expected)
        for snapshot in Self.variants {
            guard case .object(var members) = snapshot.json else { continue }
            members["format"] = nil
            members["log"] = nil
            members["lifecycle"] = .array(snapshot.lifecycle.map(\.json))
            #expect(ShellSnapshot(json: .object(members)) == snapshot)
        }
    }

    @Test func everyRecordHasAStoredCodeThatReadsBack() {
        let names = ["list", "", "c", "é \"quoted\" \\ \n", "completion"]
        var records: [LifecycleRecord] = names.flatMap { name in LifecycleEvent.allCases.map { .screen(name, $0) } }
        records += [.root, .push, .pop, .present, .dismiss].map { LifecycleRecord.completion($0) }
        for record in records {
            #expect(LifecycleRecord(storedCode: record.storedCode) == record)
        }
        // Distinct records, distinct codes.
        #expect(Set(records.map(\.storedCode)).count == records.count)
        #expect(LifecycleRecord(storedCode: "") == nil)
        #expect(LifecycleRecord(storedCode: "listz") == nil)
        #expect(LifecycleRecord(storedCode: "nowherec") == nil)
    }

    @Test func aSnapshotOfANewerFormatIsNotLoaded() throws {
        guard case .object(var members) = Self.variants[Self.variants.count - 1].json else {
            Issue.record("a snapshot's JSON is an object")
            return
        }
        members["format"] = 3
        #expect(ShellSnapshot(json: .object(members)) == nil)
    }
}
