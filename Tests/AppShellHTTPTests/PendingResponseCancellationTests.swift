import AppShellConcurrency
import Testing

@testable import AppShellHTTP

/// A deferred answer's work is told when its answer will not be used (the client went away, the
/// server answered at shutdown), until it begins committing its outcome: from then on only its
/// own answer is given, but at the very end of a shutdown.
@Suite struct PendingResponseCancellationTests {
    /// Counts the calls of an `onCancel` handler.
    final class Count: Sendable {
        let calls = Locked(0)
        var value: Int { calls.withLock { $0 } }
        func add() { calls.withLock { $0 += 1 } }
    }

    @Test func aClientThatGoesAwayAnswersAndCancelsOnceAndTheWorkCommitsNothing() {
        let pending = PendingResponse()
        let count = Count()
        pending.onCancel { count.add() }
        #expect(pending.claim())
        pending.clientWentAway()
        pending.clientWentAway()
        #expect(count.value == 1)
        #expect(pending.isCancelled)
        #expect(pending.isAnswered)
        #expect(pending.waitForAnswer(milliseconds: 1000)?.status.rawValue == 499)
        #expect(!pending.beginFinishing())
        // A handler registered after the cancellation runs at once.
        pending.onCancel { count.add() }
        #expect(count.value == 2)
    }

    @Test func workThatBeganFinishingIsNeitherAnsweredNorCancelledByAClientGoingAway() {
        let pending = PendingResponse()
        let count = Count()
        pending.onCancel { count.add() }
        #expect(pending.claim())
        #expect(pending.beginFinishing())
        #expect(pending.beginFinishing())  // a commit tried again
        pending.clientWentAway()
        #expect(count.value == 0)
        #expect(!pending.isAnswered)
        pending.fulfil(.text("done"))
        #expect(pending.waitForAnswer(milliseconds: 1000)?.status == .ok)
    }

    @Test func aShutdownWaitsForFinishingWorkUntilItsLastStep() {
        let responses = DeferredResponses()
        let (queued, running, finishing) = (PendingResponse(), PendingResponse(), PendingResponse())
        let cancelled = Count()
        for pending in [queued, running, finishing] {
            #expect(responses.admit(pending))
            pending.onCancel { cancelled.add() }
        }
        #expect(running.claim() && finishing.claim() && finishing.beginFinishing())

        // The timeout ended: all but the finishing one are answered 503 and cancelled.
        let shuttingDown = Response.text("shutting down", status: .serviceUnavailable)
        #expect(responses.answerAll(with: shuttingDown, evenIfClaimed: true, evenIfFinishing: false) == 2)
        #expect(cancelled.value == 2)
        #expect(queued.isAnswered && running.isAnswered && !finishing.isAnswered)
        // Still not answered itself at the last step: answered too, as nothing may stay suspended.
        #expect(responses.answerAll(with: shuttingDown, evenIfClaimed: true) == 1)
        #expect(finishing.waitForAnswer(milliseconds: 1000)?.status == .serviceUnavailable)
        #expect(!responses.admit(PendingResponse()))
    }
}
