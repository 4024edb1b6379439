import Dispatch

/// A bound on the password checks running at once: each Argon2id check holds 64 MiB and about
/// 65 ms of a core, so an unbounded number of logins at once is a memory and CPU exhaustion.
///
/// A counting semaphore: `withSlot` runs its body once one of `count` slots is free, and gives up
/// (returns `nil`, for a 503 with `Retry-After`) when none frees within `waitMilliseconds`. The
/// wait blocks the calling thread, so keep it short while checks run on the server's workers; a
/// pool that runs the checks elsewhere can take the same slots with `acquire`/`release`.
public final class PasswordCheckSlots: Sendable {
    /// How many checks may run at once.
    public let count: Int
    /// How long a check waits for a slot before giving up, in milliseconds.
    public let waitMilliseconds: Int
    private let semaphore: DispatchSemaphore

    /// `count` slots (at least 1); a check gives up after `waitMilliseconds`.
    public init(count: Int, waitMilliseconds: Int = 250) {
        precondition(count >= 1, "at least one password check must be able to run")
        self.count = count
        self.waitMilliseconds = max(0, waitMilliseconds)
        semaphore = DispatchSemaphore(value: count)
    }

    /// Takes a slot, waiting at most `waitMilliseconds`; false when none freed in time.
    public func acquire() -> Bool {
        semaphore.wait(timeout: .now() + .milliseconds(waitMilliseconds)) == .success
    }

    /// Gives back a slot taken by a successful `acquire`.
    public func release() { semaphore.signal() }

    /// Runs `body` holding a slot; `nil` (without running it) when no slot freed in time.
    public func withSlot<Result>(_ body: () throws -> Result) rethrows -> Result? {
        guard acquire() else { return nil }
        defer { release() }
        return try body()
    }
}
