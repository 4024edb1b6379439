import AppShellConcurrency
import Testing

/// Work registered during a batch runs once per key, in order, when the batch ends.
@Suite struct ThreadBatchTests {
    final class Key {}

    @Test func workRunsOncePerKeyAtTheEndOfTheBatch() {
        let first = ObjectIdentifier(Key.self)
        let second = ObjectIdentifier(ThreadBatchTests.self)
        var log: [String] = []
        ThreadBatch.run {
            #expect(ThreadBatch.atEnd(once: first) { log.append("first") })
            #expect(ThreadBatch.atEnd(once: first) { log.append("first again") })
            #expect(ThreadBatch.atEnd(once: second) { log.append("second") })
            // A batch inside a batch is the outer one's.
            ThreadBatch.run { #expect(ThreadBatch.atEnd(once: second) { log.append("inner") }) }
            log.append("body")
        }
        #expect(log == ["body", "first", "second"])
        // Outside a batch nothing is registered.
        #expect(!ThreadBatch.atEnd(once: first) { log.append("outside") })
        #expect(log == ["body", "first", "second"])
        // The next batch registers anew.
        ThreadBatch.run { _ = ThreadBatch.atEnd(once: first) { log.append("next") } }
        #expect(log == ["body", "first", "second", "next"])
    }

    final class Leftover {
        let released: Locked<[String]>
        let name: String
        init(_ name: String, _ released: Locked<[String]>) {
            self.name = name
            self.released = released
        }
        deinit { released.withLock { $0.append(name) } }
    }

    /// What a batch leaves is let go of by whoever its end work hands it to, else at its end.
    @Test func leftoversGoWithTheEndWorkOrAtTheEnd() {
        let released = Locked<[String]>([])
        var handed: [AnyObject] = []
        ThreadBatch.run {
            ThreadBatch.leave(Leftover("taken", released))
            // Only the end work takes them.
            #expect(ThreadBatch.takeLeftovers().isEmpty)
            _ = ThreadBatch.atEnd(once: ObjectIdentifier(Key.self)) {
                handed = ThreadBatch.takeLeftovers()
                // The end work runs outside the batch: work it registers is not kept for later.
                #expect(!ThreadBatch.atEnd(once: ObjectIdentifier(Leftover.self)) {})
            }
        }
        // Taken by the end work: alive until its taker lets go.
        #expect(released.withLock { $0 }.isEmpty)
        #expect(handed.count == 1)
        handed = []
        #expect(released.withLock { $0 } == ["taken"])
        // Not taken: let go of at the batch's end.
        ThreadBatch.run {
            ThreadBatch.leave(Leftover("not taken", released))
            #expect(released.withLock { $0 } == ["taken"])
        }
        #expect(released.withLock { $0 } == ["taken", "not taken"])
        // Outside a batch nothing is kept, and nothing is there to take.
        ThreadBatch.leave(Leftover("outside", released))
        #expect(released.withLock { $0 } == ["taken", "not taken", "outside"])
        #expect(ThreadBatch.takeLeftovers().isEmpty)
    }
}
