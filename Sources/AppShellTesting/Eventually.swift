import Foundation

/// Calls `condition` until it holds, for at most `seconds`, and returns whether it held (it is
/// called once more at the end): how a test waits for what another thread or process does — a
/// request answered, a job queued, a stream opened — instead of sleeping a fixed time. It looks
/// again after 1 ms, then less and less often, every 16 ms at the longest, so a condition that
/// costs a request is not asked thousands of times. `seconds` is a bound that a working system
/// never nears (a loaded machine, the sanitizers): the wait ends as soon as the condition holds,
/// and only a condition that never does costs the whole bound.
///
/// ```swift
/// #expect(eventually { server.waitingDeferredResponses == 0 })
/// ```
public func eventually(within seconds: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    var pause: useconds_t = 1_000
    while Date() < deadline {
        if try condition() { return true }
        usleep(pause)
        pause = min(pause * 2, 16_000)
    }
    return try condition()
}
