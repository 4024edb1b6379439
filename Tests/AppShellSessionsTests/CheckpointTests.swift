import AppShellTesting
import Foundation
import Testing

@testable import AppShellSessions

/// The SQLite store's checkpoints run on a thread of their own (`SQLiteCheckpointer`): a commit
/// never copies the write-ahead log into the file nor syncs it, so the requests waiting for a group
/// commit never wait for the disk's flushes; and the log still starts again from its beginning.
@Suite struct CheckpointTests {
    /// About two pages of SQLite (4 096 bytes each) per record.
    static func record(_ index: Int) -> SessionRecord {
        SessionRecord(
            values: ["index": .integer(index), "filler": .string(String(repeating: "x", count: 6000))],
            created: 1_700_000_000, accessed: 1_700_000_000)
    }

    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// Writes batches of `perBatch` records until the log has held `frames` frames in all.
    static func write(
        _ backend: SQLiteDefaultsBackend, records: Range<Int>, perBatch: Int = 4, upkeep: Bool = true
    ) throws {
        for start in stride(from: records.lowerBound, to: records.upperBound, by: perBatch) {
            let batch = (start..<min(start + perBatch, records.upperBound)).map {
                StoreWrite.save(SessionID.random(), record($0))
            }
            try backend.applyAll(batch)
            if upkeep { backend.afterBatch() }
        }
    }

    /// Records enough to take the log past the checkpoint threshold (two frames or more each).
    static let pastThreshold = SQLiteCheckpointer.defaultThreshold * 5 / 8

    /// Before: SQLite's automatic checkpoint ran inside the commit that took the log past 1 000
    /// frames, on the store writer's thread — the database file grew during the commit.
    @Test func aCommitNeverCopiesTheLogIntoTheFile() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let backend = try SQLiteDefaultsBackend(path: path)
            let before = Self.size(path)
            let records = Self.pastThreshold
            try backend.checkpointer.withCheckpointsHeld {
                try Self.write(backend, records: 0..<records)
                #expect(Self.size(path + "-wal") > SQLiteCheckpointer.defaultThreshold * 4096)
                #expect(Self.size(path) == before, "a commit copied the log into the file (a checkpoint)")
            }
            #expect(eventually { backend.checkpointer.checkpoints.load(ordering: .relaxed) > 0 })
            #expect(eventually { Self.size(path) > before + records * 4096 }, "the checkpointer copied the log")
            #expect(backend.checkpointer.failures.load(ordering: .relaxed) == 0)
        }
    }

    /// A pass that could not copy the whole log (here a reader still used an old part of it;
    /// under load, commits made while it ran) is finished by the writer's connection after a
    /// batch, and the next commit restarts the log instead of growing it. Before, nothing finished
    /// it: under steady commits every pass raced with new frames, the log was never all copied,
    /// never restarted, and grew for as long as the commits went on.
    @Test func theWriterFinishesAPassAndTheLogRestarts() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let backend = try SQLiteDefaultsBackend(path: path)
            try Self.write(backend, records: 0..<8)
            let reader = try SQLiteConnection(path: path)
            try reader.execute("BEGIN")
            #expect(try reader.query("SELECT count(*) FROM sessions") { $0.int64(at: 0) } == [8])
            // No batch ends (no `afterBatch`) while the reader holds the old part of the log.
            let end = 8 + Self.pastThreshold
            try Self.write(backend, records: 8..<end, upkeep: false)
            #expect(eventually { backend.checkpointer.checkpoints.load(ordering: .relaxed) > 0 })
            try backend.checkpointer.withCheckpointsHeld {
                try reader.execute("COMMIT")
                reader.close()
                let copiedByThePass = Self.size(path)
                backend.afterBatch()
                #expect(
                    Self.size(path) > copiedByThePass + (end - 108) * 4096, "the writer's connection copied the rest")
            }
            let log = Self.size(path + "-wal")
            try Self.write(backend, records: end..<(end + 200))
            #expect(Self.size(path + "-wal") == log, "the log restarted from its beginning")
            #expect(try backend.count() == end + 200)
            #expect(backend.checkpointer.failures.load(ordering: .relaxed) == 0)
        }
    }

    /// A commit that leaves the log far below the threshold is synced all the same, within the
    /// checkpointer's interval: before, a quiet store's last commits stayed in the log, unsynced,
    /// until 1 000 frames had gathered — a power loss meanwhile lost them, however old they were.
    @Test func aFewCommitsAreCheckpointedWithinTheInterval() throws {
        try BackendTestDirectory.with { directory throws in
            let path = directory.path + "/sessions.sqlite"
            let backend = try SQLiteDefaultsBackend(path: path)
            let before = Self.size(path)
            try Self.write(backend, records: 0..<3, upkeep: false)
            #expect(Self.size(path + "-wal") < SQLiteCheckpointer.defaultThreshold * 4096 / 100)
            // Within a second; `eventually` allows a loaded machine twenty.
            #expect(eventually { backend.checkpointer.checkpoints.load(ordering: .relaxed) > 0 })
            #expect(Self.size(path) > before + 3 * 4096, "the checkpoint copied the three records into the file")
            #expect(backend.checkpointer.failures.load(ordering: .relaxed) == 0)
        }
    }
}
