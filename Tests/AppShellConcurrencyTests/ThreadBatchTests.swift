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
}
