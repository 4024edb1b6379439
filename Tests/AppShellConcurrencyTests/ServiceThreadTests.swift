import AppShellConcurrency
import Glibc
import Testing

/// A service thread: what it was given is served before it ends, `stop` waits for that, and
/// nothing is taken after `stop`.
@Suite struct ServiceThreadTests {
    /// A queue of numbers served by adding them up, the way the store writer and the session
    /// loader use a service thread.
    final class Adder: @unchecked Sendable {
        let service = ServiceThread(name: "test-adder")
        var queue: [Int] = []
        var served: [Int] = []
        var servedOn: pthread_t?
        let gate = Semaphore(value: 0)

        func start(waitingAtFirst: Bool = false) {
            service.start { [self] in
                var first = waitingAtFirst
                while true {
                    service.condition.lock()
                    guard service.waitForWork({ !queue.isEmpty }) else {
                        service.condition.unlock()
                        return
                    }
                    let batch = queue
                    queue = []
                    service.condition.unlock()
                    if first {
                        gate.wait()
                        first = false
                    }
                    service.condition.lock()
                    served += batch
                    servedOn = pthread_self()
                    service.condition.unlock()
                }
            }
        }

        /// Queues `number`; false when the service stopped.
        func add(_ number: Int) -> Bool {
            service.condition.lock()
            defer { service.condition.unlock() }
            guard !service.isStopping else { return false }
            queue.append(number)
            service.condition.signal()
            return true
        }

        var servedSoFar: [Int] {
            service.condition.lock()
            defer { service.condition.unlock() }
            return served
        }
    }

    @Test func whatIsQueuedIsServedBeforeStopReturns() {
        let adder = Adder()
        adder.start(waitingAtFirst: true)
        #expect(adder.add(1))
        // The thread holds its first batch at the gate while more is queued and `stop` is called.
        while adder.service.condition.withLockHeld({ !adder.queue.isEmpty }) { sched_yield() }
        #expect(adder.add(2))
        #expect(adder.add(3))
        let stopped = Semaphore(value: 0)
        let stopper = BackgroundThread {
            adder.service.stop()
            stopped.signal()
        }
        stopper.start()
        while !adder.service.condition.withLockHeld({ adder.service.isStopping }) { sched_yield() }
        #expect(!adder.add(4))
        adder.gate.signal()
        stopped.wait()
        #expect(adder.servedSoFar == [1, 2, 3])
        #expect(adder.servedOn.map { pthread_equal($0, pthread_self()) == 0 } == true)
    }

    @Test func stopOnTheServicesOwnThreadDoesNotWaitForItself() {
        let adder = Adder()
        let ended = Semaphore(value: 0)
        adder.service.start {
            adder.service.stop()
            adder.service.condition.lock()
            let more = adder.service.waitForWork { false }
            adder.service.condition.unlock()
            #expect(!more)
            ended.signal()
        }
        ended.wait()
        // Ended: a second stop returns at once.
        adder.service.stop()
    }

    @Test func stopWithoutStartReturnsAtOnce() {
        let service = ServiceThread(name: "test-idle")
        service.stop()
        service.condition.lock()
        #expect(service.isStopping)
        service.condition.unlock()
    }
}

extension Condition {
    /// `body`'s result, computed holding the lock.
    fileprivate func withLockHeld<Result>(_ body: () -> Result) -> Result {
        lock()
        defer { unlock() }
        return body()
    }
}
