import AppShellConcurrency
import CMicroHTTPD

/// The connections whose answers a thread gave in a `ThreadBatch`, waiting to be resumed.
///
/// At the batch's end that thread resumes the first; the server thread that takes its answer
/// (`answerOrSuspend`) — or sees it complete (`detach`) — resumes the others, without a context
/// switch each. Every batch that added one resumes one at its end, so none is left waiting.
/// That server thread also lets go of what the batch left (`ThreadBatch.leave`): the requests'
/// objects, freed on the thread that made them.
final class Resumptions: Sendable {
    /// The one queue (a connection may be resumed from any thread, whichever daemon it is of).
    static let shared = Resumptions()

    private struct Waiting: Sendable {
        let connection: LoopConnection
        let pending: PendingResponse
    }

    private struct Queue: @unchecked Sendable {
        // @unchecked: the leftovers are only let go of, never used.
        var waiting: [Waiting] = []
        var leftovers: [AnyObject] = []
    }

    private let queue = Locked(Queue())

    /// Queues the connection of `pending` when the calling thread runs a batch (false, queuing
    /// nothing, when it does not: resume it at once).
    func add(_ connection: LoopConnection, of pending: PendingResponse) -> Bool {
        let inBatch = ThreadBatch.atEnd(once: ObjectIdentifier(Resumptions.self)) {
            Resumptions.shared.resumeFirst()
        }
        guard inBatch else { return false }
        queue.withLock { $0.waiting.append(Waiting(connection: connection, pending: pending)) }
        return true
    }

    /// Resumes the first connection waiting (at the end of a batch), leaving what the batch
    /// left for the server thread that resumes the others — which that connection's answer or
    /// end makes sure of. With no connection to resume, the leftovers are let go of here.
    func resumeFirst() {
        let leftovers = ThreadBatch.takeLeftovers()
        let first = queue.withLock { queue -> Waiting? in
            guard !queue.waiting.isEmpty else { return nil }
            queue.leftovers.append(contentsOf: leftovers)
            return queue.waiting.removeFirst()
        }
        if let first { resume(first) }
    }

    /// Resumes every connection waiting, and lets go of the batches' leftovers (on a server
    /// thread).
    func resumeAll() {
        let (all, leftovers) = queue.withLock { queue -> ([Waiting], [AnyObject]) in
            guard !queue.waiting.isEmpty || !queue.leftovers.isEmpty else { return ([], []) }
            defer {
                queue.waiting.removeAll(keepingCapacity: true)
                queue.leftovers = []
            }
            return (queue.waiting, queue.leftovers)
        }
        for item in all { resume(item) }
        withExtendedLifetime(leftovers) {}
    }

    private func resume(_ item: Waiting) {
        item.connection.resume()
        item.pending.resumed()
    }
}
