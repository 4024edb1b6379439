import AppShellSessions
import DefaultsBackendTestSupport
import Synchronization
import Testing

/// A backend that records every write of the group commits it passes on.
final class RecordingBackend: ForwardingDefaultsBackend, @unchecked Sendable {
    // @unchecked: `written` is a Mutex.
    /// The backend that does the work.
    let inner: any DefaultsBackend

    /// A backend forwarding to `inner` but for what it does itself.
    init(inner: any DefaultsBackend = MemoryDefaultsBackend()) { self.inner = inner }

    private let written = Mutex<[StoreWrite]>([])

    /// The writes made so far, in order.
    var writes: [StoreWrite] { written.withLock { $0 } }

    func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        written.withLock { $0.append(contentsOf: writes) }
        try inner.applyAll(writes)
    }
}

/// A save whose values the store already holds (an action that changed only the snapshot) is
/// marked `valuesAsStored`, and the SQLite backend then writes the snapshot alone — but the whole
/// record whenever the stored one is not as the mark says.
@Suite struct SnapshotOnlySaveTests {
    static func record(of write: StoreWrite?) -> SessionRecord? {
        if case .save(_, let record) = write { return record }
        return nil
    }

    @Test func aSaveChangingOnlyTheSnapshotIsMarkedAndOneChangingValuesIsNot() throws {
        let backend = RecordingBackend()
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: backend, groupCommitQueue: 8)
        defer { registry.stopWriter() }
        // A new session: nothing is stored yet.
        let id = try registry.withSession(presentedID: nil) { session in
            session.defaults.set(1, forKey: "n")
            session.keptSnapshot = SessionSnapshot(bytes: [1])
        }.context.id
        // Its snapshot alone, then its values and its snapshot.
        _ = try registry.enterSession(presented: id) { $0.keptSnapshot = SessionSnapshot(bytes: [2]) }
        _ = try registry.enterSession(presented: id) { session in
            session.defaults.set(2, forKey: "n")
            session.keptSnapshot = SessionSnapshot(bytes: [3])
        }
        let records = backend.writes.compactMap(Self.record(of:))
        #expect(records.map(\.valuesAsStored) == [false, true, false])
        #expect(records.map(\.snapshot) == [[1], [2], [3]])
        #expect(
            try backend.load(id)
                == SessionRecord(
                    values: ["n": .integer(2)], created: records[0].created,
                    accessed: records[2].accessed, snapshot: [3]))
    }

    @Test func theSQLiteStoreWritesTheSnapshotAloneOrTheWholeRecordWhenItIsNotAsMarked() throws {
        try BackendTestDirectory.with { directory throws in
            let backend = try SQLiteDefaultsBackend(path: directory.path + "/sessions.sqlite")
            defer { backend.close() }
            let id = SessionID.random()
            try backend.save(id, SessionRecord(values: ["n": .integer(1)], created: 10, accessed: 20, snapshot: [1]))
            // As marked: the snapshot changes, the stored values stay.
            var marked = SessionRecord(values: ["n": .integer(1)], created: 10, accessed: 20, snapshot: [2, 2])
            marked.valuesAsStored = true
            try backend.applyAll([.save(id, marked)])
            #expect(try backend.load(id) == marked)
            // Stored with other times (an access time written since): the whole record.
            var later = SessionRecord(values: ["n": .integer(1)], created: 10, accessed: 40, snapshot: [3])
            later.valuesAsStored = true
            try backend.applyAll([.save(id, later)])
            #expect(try backend.load(id) == later)
            // Not stored at all (swept meanwhile): the whole record, its values too.
            let gone = SessionID.random()
            var missing = SessionRecord(values: ["user": .string("ann")], created: 5, accessed: 6, snapshot: [4])
            missing.valuesAsStored = true
            try backend.applyAll([.save(gone, missing)])
            #expect(try backend.load(gone) == missing)
        }
    }
}
