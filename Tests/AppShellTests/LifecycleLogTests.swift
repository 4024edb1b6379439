import AppShell
import AppShellJSON
import Testing

/// The lifecycle log keeps its records' JSON beside them, and snapshots made from a log write the
/// same JSON as snapshots made from its records.
@Suite struct LifecycleLogTests {
    static let events: [LifecycleRecord] = (0..<130).map { index in
        index % 7 == 0
            ? .completion(index % 2 == 0 ? .push : .pop)
            : .screen("screen\(index % 5)", LifecycleEvent.allCases[index % LifecycleEvent.allCases.count])
    }

    @Test func theJSONFollowsTheRecordsPastTheCapacity() {
        var log = LifecycleLog()
        for (count, record) in Self.events.enumerated() {
            log.append(record)
            #expect(log.records.count == min(count + 1, LifecycleLog.capacity))
            #expect(log.json == log.records.map(\.json))
            // The stored codes the log keeps (dropped in bulk) are those of its records.
            let fromLog = ShellSnapshot(
                root: "main", stack: [], presented: nil, coordinators: [:], log: log, version: count, extra: .null)
            var fromRecords = fromLog
            fromRecords.lifecycle = log.records
            #expect(fromLog.serialized == fromRecords.serialized)
            #expect(fromLog.kept.bytes == fromRecords.json.serialized)
        }
        #expect(log.records == Array(Self.events.suffix(LifecycleLog.capacity)))
        let restored = LifecycleLog(records: Self.events)
        #expect(restored.records == log.records)
        #expect(restored.json == log.json)
    }

    /// The log keeps its records as bytes only: records whose names hold commas, quotes,
    /// brackets and escapes are dropped one by one past the capacity and read back as they were.
    @Test func recordsWithPunctuationInTheirNamesAreDroppedAndReadBackWhole() {
        let names = ["a,b", "quote\"d", "}{][", "back\\slash,", "ünï,cödé", "\\\","]
        var log = LifecycleLog()
        var appended: [LifecycleRecord] = []
        for index in 0..<(3 * LifecycleLog.capacity) {
            let record: LifecycleRecord =
                index % 9 == 0
                ? .completion(.present)
                : .screen(names[index % names.count], LifecycleEvent.allCases[index % LifecycleEvent.allCases.count])
            log.append(record)
            appended.append(record)
            #expect(log.records == Array(appended.suffix(LifecycleLog.capacity)))
            #expect(log.json == log.records.map(\.json))
            let fromLog = ShellSnapshot(
                root: "main", stack: [], presented: nil, coordinators: [:], log: log, version: index, extra: .null)
            #expect(fromLog.kept.bytes == fromLog.json.serialized)
        }
        #expect(LifecycleLog(records: appended).records == log.records)
    }

    @Test func aSnapshotFromALogWritesWhatOneFromItsRecordsWrites() {
        let log = LifecycleLog(records: Self.events)
        let fromLog = ShellSnapshot(
            root: "navigation", stack: ["main", "list"], presented: nil, coordinators: ["name": "app"], log: log,
            version: 7, extra: .null, channel: "c")
        let fromRecords = ShellSnapshot(
            root: "navigation", stack: ["main", "list"], presented: nil, coordinators: ["name": "app"],
            lifecycle: log.records, version: 7, extra: .null, channel: "c")
        #expect(fromLog == fromRecords)
        #expect(fromLog.json.serialized == fromRecords.json.serialized)
        // The records' bytes are copied from the log: the same bytes as writing them.
        #expect(fromLog.serialized == fromRecords.json.serialized)
        #expect(fromRecords.serialized == fromRecords.json.serialized)
        let empty = ShellSnapshot(
            root: "splash", stack: [], presented: "login", coordinators: [:], log: LifecycleLog(), version: 0,
            extra: ["lifecycle": "not the log"])
        #expect(empty.serialized == empty.json.serialized)
        #expect(ShellSnapshot(json: fromLog.json) == fromLog)
        var changed = fromLog
        changed.lifecycle = [.completion(.dismiss)]
        #expect(changed.json["log"] == .array([.string(LifecycleRecord.completion(.dismiss).storedCode)]))
        #expect(changed.serialized == changed.json.serialized)
        // Its kept bytes are the new records', not the log's it was made from.
        #expect(changed.kept.bytes == changed.json.serialized)
        #expect(changed != fromLog)
    }
}
