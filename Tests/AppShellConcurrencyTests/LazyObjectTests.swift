import AppShellConcurrency
import Glibc
import Testing

/// An object stored once, by the first thread to store one.
@Suite struct LazyObjectTests {
    final class Box: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    final class Holder: Sendable {
        let lazy = LazyObject<Box>()
    }

    @Test func theFirstObjectStoredStays() {
        let holder = Holder()
        #expect(holder.lazy.load() == nil)
        let first = Box(1)
        #expect(holder.lazy.storeIfNil(first) === first)
        #expect(holder.lazy.load() === first)
        #expect(holder.lazy.storeIfNil(Box(2)) === first)
        #expect(holder.lazy.load()?.value == 1)
    }

    @Test func theObjectsAreLetGoOf() {
        weak var kept: Box?
        weak var refused: Box?
        do {
            let holder = Holder()
            let first = Box(1)
            let second = Box(2)
            kept = first
            refused = second
            _ = holder.lazy.storeIfNil(first)
            _ = holder.lazy.storeIfNil(second)
        }
        #expect(kept == nil)
        #expect(refused == nil)
    }

    @Test func threadsStoringAtOnceAllGetTheSameObject() {
        for _ in 0..<50 {
            let holder = Holder()
            let results = Locked<[ObjectIdentifier]>([])
            let threads = (0..<4).map { index in
                BackgroundThread {
                    let stored = holder.lazy.storeIfNil(Box(index))
                    results.withLock { $0.append(ObjectIdentifier(stored)) }
                }
            }
            for thread in threads { thread.start() }
            while results.withLock({ $0.count }) < 4 { sched_yield() }
            let identifiers = results.withLock { $0 }
            #expect(Set(identifiers).count == 1)
            #expect(identifiers.first == holder.lazy.load().map(ObjectIdentifier.init))
        }
    }
}
