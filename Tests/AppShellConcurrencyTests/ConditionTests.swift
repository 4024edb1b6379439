import AppShellConcurrency
import Dispatch
import Testing

/// A condition wakes its waiter when signalled, and lets a timed wait end without a signal.
@Suite struct ConditionTests {
    @Test func aTimedWaitWithNoSignalReturnsFalse() {
        let condition = Condition()
        condition.lock()
        let woken = condition.wait(milliseconds: 20)
        condition.unlock()
        #expect(!woken)
    }

    @Test func aSignalWakesAWaiterBeforeItsTimeout() {
        let condition = Condition()
        let ready = Locked(false)
        let finished = DispatchSemaphore(value: 0)
        let waiter = BackgroundThread {
            condition.lock()
            // A minute: woken by the signal long before, unless signals are lost.
            while !ready.withLock({ $0 }) {
                if !condition.wait(milliseconds: 60_000) { break }
            }
            condition.unlock()
            finished.signal()
        }
        waiter.start()
        condition.lock()
        ready.withLock { $0 = true }
        condition.signal()
        condition.unlock()
        #expect(finished.wait(timeout: .now() + .seconds(30)) == .success)
    }

    @Test func broadcastWakesEveryWaiter() {
        let condition = Condition()
        let released = Locked(false)
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<8 {
            let waiter = BackgroundThread {
                condition.lock()
                while !released.withLock({ $0 }) { condition.wait() }
                condition.unlock()
                finished.signal()
            }
            waiter.start()
        }
        condition.lock()
        released.withLock { $0 = true }
        condition.broadcast()
        condition.unlock()
        for _ in 0..<8 { #expect(finished.wait(timeout: .now() + .seconds(30)) == .success) }
    }
}
