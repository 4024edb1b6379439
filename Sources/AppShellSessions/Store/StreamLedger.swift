/// The event streams each session has open at all the instances sharing a store, so that the cap
/// on a session's streams holds across instances rather than at each one: a stream takes a place
/// in its channel's ledger before it is answered, and gives it back when it ends.
///
/// A place is held for as long as its instance keeps renewing it (while the stream is open): the
/// places of an instance that stopped without giving them back (it was killed) free themselves a
/// moment later. When the ledger's store cannot be reached a stream is let in: the cap then holds
/// at each instance only, until the store is back.
package protocol StreamLedger: Sendable {
    /// Asks for a place for the stream `stream` (a name no other stream of this instance has) of
    /// `channel`, which may have at most `limit` streams open in all; `done` is called, on the
    /// ledger's thread, with whether it got one. The place is renewed while `isOpen()` says the
    /// stream is open, and given back once it says it is not (or on `release`).
    func admit(
        _ stream: String, of channel: String, limit: Int, isOpen: @escaping @Sendable () -> Bool,
        _ done: @escaping @Sendable (_ admitted: Bool) -> Void)
    /// Gives back the place of `stream` (it ended).
    func release(_ stream: String, of channel: String)
    /// Starts the ledger's thread.
    func start()
    /// Gives back every place this instance holds, and stops.
    func stop()
}
