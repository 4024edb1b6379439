import AppShellSessions

/// Ending the event streams of sessions that ended with no request to notice it.
extension Shell {
    /// Every `interval` milliseconds, ends the event streams whose session ended with no request to
    /// notice it (see `endStreamsOfEndedSessions`), on the scheduler's thread.
    package func startEndingStreamsOfEndedSessions(everyMilliseconds interval: Int64) {
        scheduler.schedule(at: clock() + interval) { [weak self] in
            guard let self else { return }
            endStreamsOfEndedSessions()
            startEndingStreamsOfEndedSessions(everyMilliseconds: interval)
        }
    }

    /// Ends the open event streams whose session has ended with no request to notice it: it
    /// expired, or it left memory holding nothing worth storing. A stream held open for such a
    /// session would never hear anything again; ended, its page reconnects (an `EventSource` does
    /// by itself) and gets the state of the session that takes its place, under another epoch.
    /// The streams of a session that left memory but is stored stay: it comes back as it was, on
    /// the same channel. Returns how many sessions' streams were ended.
    @discardableResult
    package func endStreamsOfEndedSessions() -> Int {
        // A session whose record cannot be read now is taken to live: its streams stay.
        let ended = events.sessionIDs().filter { (try? registry.names($0)) == false }
        if !ended.isEmpty { events.endStreams(openedWith: ended) }
        return ended.count
    }
}
