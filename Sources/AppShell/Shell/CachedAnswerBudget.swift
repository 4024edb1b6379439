import AppShellHTTP
import Synchronization

/// The bytes that the answers the live apps keep prepared (their state, their page: see
/// `Shell+Caches`) may hold in all: they are what a session in memory holds beyond its app, and
/// what varies most from one session to another. With the cap on sessions in memory (a count) it
/// bounds what the sessions hold by bytes (issue 31, finding 2): past the budget an answer is
/// made for each request and not kept, slower but no larger, until sessions leave memory.
final class CachedAnswerBudget: Sendable {
    /// The bytes the kept answers may hold in all.
    let limit: Int
    private let held = Atomic<Int>(0)

    /// A budget of `limit` bytes.
    init(limit: Int) { self.limit = max(0, limit) }

    /// The bytes the kept answers hold now.
    var heldBytes: Int { held.load(ordering: .relaxed) }

    /// Whether an answer of `bytes` may be kept now (a few kept at once by several threads may go
    /// past the limit by as many answers).
    func hasRoom(for bytes: Int) -> Bool { held.load(ordering: .relaxed) + bytes <= limit }

    /// Counts `change` bytes more (or fewer, when negative) held by kept answers.
    func add(_ change: Int) { if change != 0 { held.add(change, ordering: .relaxed) } }
}
