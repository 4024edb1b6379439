import AppShellSessions

/// The user's other open pages, told of a change of the user's store: the analogue of
/// `NSUbiquitousKeyValueStore.didChangeExternallyNotification`. Each page of the user — in this
/// browser's other tabs, in other browsers, at other instances — gets its session's state again,
/// rendered on the store as committed.
extension Shell {
    /// `user`'s store was committed by a request of the page listening on `channel`: the other
    /// instances are told, and every other page of the user here is rendered again (on the
    /// scheduler's thread, not the store writer's).
    func userStoreChanged(_ user: String, by channel: String) {
        events.announceUserChange(user)
        renderUserPages(of: user, excluding: channel)
    }

    /// Ends every session of `user` but `kept` (log out everywhere, a password change), here and at
    /// the other instances sharing the store, their event streams included: in memory and in the
    /// store (`SessionRegistry.endSessions`). Blocks while the store is written: run it as an
    /// action's awaited work. Returns how many sessions were ended in memory here.
    package func endSessions(ofUser user: String, except kept: SessionID?) throws(StoreError) -> Int {
        let ended = try registry.endSessions(ofUser: user, except: kept)
        events.endStreams(openedWith: ended)
        events.endStreams(ofUser: user, exceptStoreKey: kept?.storeKey)
        AccessLog.security("sessions ended", ["username": user, "sessions": String(ended.count)])
        return ended.count
    }

    /// Renders again every page open here as `user` (but the one of `excluded`), each under its
    /// session's lock, as work with no request.
    func renderUserPages(of user: String, excluding excluded: String? = nil) {
        let pages = events.sessions(ofUser: user, excluding: excluded)
        guard !pages.isEmpty else { return }
        let now = clock()
        for page in pages {
            scheduler.schedule(at: now) { [self] in renderUserPage(page.id, of: user) }
        }
    }

    /// The session `id`'s state again, with the user's store as it is now: a new version, kept and
    /// published to the session's pages. Nothing when the session is no longer `user`'s or no
    /// longer live here.
    private func renderUserPage(_ id: SessionID, of user: String) {
        do {
            _ = try registry.withLiveSession(id) { session in
                guard session.user == user, session.attachment is LiveApp || session.keptSnapshot != nil else { return }
                let app = live(session)
                try withBound(app, session) {
                    app.stateCache = nil
                    app.pageCache = nil
                    app.root.noteChange()
                    try keep(app, in: session)
                    afterCommit(app, session, publishing: true)
                }
            }
        } catch {
            Logger.appshell.error("a page of \(user) could not be rendered again: \(error)")
        }
    }
}
