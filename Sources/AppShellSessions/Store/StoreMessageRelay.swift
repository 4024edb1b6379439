/// Messages between the instances that share a store: what one sends on a channel, every other
/// one that listens to that channel receives (a session's events for the pages another instance
/// holds open). Best effort: a message sent while the relay cannot reach its server is lost, and
/// the receivers catch up on their next request (a page's state always comes with its next
/// answer) or when told the channel is listened to again (`start`'s `listening`).
package protocol StoreMessageRelay: Sendable {
    /// Sends `message` on `channel` to the other instances listening to it, without waiting; this
    /// instance does not receive it.
    func send(_ message: [UInt8], on channel: String)
    /// Listens to `channel`, once more: it is listened to from its first `listen` until the
    /// `stopListening` that balances them all. What was sent on it before it was listened to is
    /// not received; `start`'s `listening` says from when what is sent is.
    func listen(to channel: String)
    /// Takes back one `listen(to:)` of `channel`: the last one stops its messages (one more than
    /// there were is ignored).
    func stopListening(to channel: String)
    /// Delivers the other instances' messages on the channels listened to to `receive`, in the
    /// order each sent them, on the relay's thread, from now until `stop`; tells `listening` each
    /// time a channel's messages are received from then on — once it is listened to, and again
    /// after the relay lost its server a while (what was sent on it meanwhile was lost).
    func start(
        _ receive: @escaping @Sendable (_ channel: String, _ message: [UInt8]) -> Void,
        listening: @escaping @Sendable (_ channel: String) -> Void
    )
    /// Stops receiving and sending; returns once the relay's threads no longer call anything.
    func stop()
}
