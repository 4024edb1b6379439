import AppShellConcurrency
import AppShellSessions
import Glibc
import Synchronization
import Testing

/// A snapshot kept as a value: its bytes are made only when a backend writes them to a file (on
/// the store writer's thread) or someone reads them, and then once.
@Suite struct SessionSnapshotTests {
    /// A snapshot of `bytes` that counts how often its bytes were made, and on which thread.
    final class Probe: Sendable {
        let bytes: [UInt8]
        let made = Atomic<Int>(0)
        let threads = Locked<[pthread_t]>([])

        init(_ text: String) { bytes = Array(text.utf8) }

        var snapshot: SessionSnapshot {
            SessionSnapshot { [self] in
                made.add(1, ordering: .relaxed)
                threads.withLock { $0.append(pthread_self()) }
                return bytes
            }
        }
    }

    @Test func theMemoryStoreKeepsTheValueAndMakesNoBytes() throws {
        let backend = MemoryDefaultsBackend()
        let registry = SessionRegistry(configuration: SessionConfiguration(), backend: backend)
        let probe = Probe("{\"root\":\"main\"}")
        let kept = probe.snapshot
        let id = try registry.withSession(presentedID: nil) { session in
            session.defaults.set(1, forKey: "n")
            session.keptSnapshot = kept
        }.context.id
        #expect(probe.made.load(ordering: .relaxed) == 0)
        // The session in memory and the backend hold the snapshot as it was made.
        let held = try registry.withSession(presentedID: id.text) { $0.keptSnapshot }.result
        #expect(held === kept)
        let record = try #require(backend.load(id))
        #expect(record.keptSnapshot === kept)
        #expect(!kept.isSerialized)
        // Read, its bytes are made once, and the same ever after.
        #expect(record.snapshot == probe.bytes)
        #expect(record.snapshot == probe.bytes)
        #expect(probe.made.load(ordering: .relaxed) == 1)
        #expect(kept.isSerialized)
    }

    @Test func theSQLiteStoreMakesTheBytesOnItsWritersThread() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let registry = SessionRegistry(
                configuration: SessionConfiguration(), backend: try SQLiteDefaultsBackend(path: path),
                groupCommitQueue: 16)
            let probe = Probe("{\"root\":\"list\"}")
            let entry = try registry.enter(presented: nil) { session in
                session.defaults.set(1, forKey: "n")
                session.keptSnapshot = probe.snapshot
            }
            guard case .committing(let context, let commit) = entry else {
                Issue.record("a write to the SQLite store goes to its writer")
                return
            }
            try commit.wait()
            registry.stopWriter()
            #expect(probe.made.load(ordering: .relaxed) == 1)
            let threads = probe.threads.withLock { $0 }
            #expect(threads.count == 1 && threads.allSatisfy { pthread_equal($0, pthread_self()) == 0 })
            // A new process on the file loads the bytes.
            let reopened = try SQLiteDefaultsBackend(path: path)
            #expect(try reopened.load(context.id)?.snapshot == probe.bytes)
        }
    }

    @Test func snapshotsAreTheSameWithoutMakingBytes() {
        let probe = Probe("x")
        let made = probe.snapshot
        #expect(SessionSnapshot.same(nil, nil))
        #expect(!SessionSnapshot.same(made, nil))
        #expect(SessionSnapshot.same(made, made))
        // A snapshot made anew counts as a change, even with the same bytes.
        #expect(!SessionSnapshot.same(made, probe.snapshot))
        #expect(!SessionSnapshot.same(made, SessionSnapshot(bytes: probe.bytes)))
        #expect(SessionSnapshot.same(SessionSnapshot(bytes: [1, 2]), SessionSnapshot(bytes: [1, 2])))
        #expect(!SessionSnapshot.same(SessionSnapshot(bytes: [1, 2]), SessionSnapshot(bytes: [1])))
        #expect(probe.made.load(ordering: .relaxed) == 0)
    }

    @Test func recordsCompareTheirSnapshotsBytes() {
        let probe = Probe("{}")
        let lazy = SessionRecord(values: [:], created: 1, accessed: 2, kept: probe.snapshot)
        let given = SessionRecord(values: [:], created: 1, accessed: 2, snapshot: probe.bytes)
        #expect(lazy == given)
        #expect(lazy != SessionRecord(values: [:], created: 1, accessed: 2, snapshot: [1]))
        #expect(lazy != SessionRecord(values: [:], created: 1, accessed: 2, snapshot: nil))
    }
}
