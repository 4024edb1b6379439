import AppShellSessions

/// Running an action on a live app: it goes to the visible screen's coordinator (or `launch` to the
/// app coordinator), a change no transition accompanied still gives a new version, and after a
/// success the action's same-site `next` path is opened. The endpoints (`Shell+Actions`,
/// `Shell+Forms`) and the deferred actions' second half run actions through it.
extension Shell {
    /// Runs `action`. The version names one state: a change that no transition accompanied — of
    /// the stored values, or of what the visible screen adds (`view`, e.g. a failed login's
    /// message), also when the action then failed — still gives a new version, and values set back
    /// to what they were (a launch on the list) are no change. After a success, a same-site `next`
    /// path is opened (login's "go where you were going").
    func apply(_ action: ActionRequest, _ app: LiveApp, _ session: SessionContext) throws(ActionError) {
        try noteChanges(app, session) { () throws(ActionError) in
            try dispatch(action, app)
            // Handed off (`RootController.finishLater`): `next` is opened once it succeeded.
            guard app.root.deferredAction == nil else { return }
            openNext(of: action, in: app)
        }
    }

    /// After an action succeeded, its same-site `next` path is opened.
    func openNext(of action: ActionRequest, in app: LiveApp) {
        if let next = action.string("next"), RequestChecks.isSameSitePath(next) {
            _ = application.open(path: next, next: nil, in: app)
        }
    }

    /// Runs `body` (an action or the rest of one), giving a new version for a change no
    /// transition accompanied (see `apply`).
    func noteChanges(
        _ app: LiveApp, _ session: SessionContext, _ body: () throws(ActionError) -> Void
    ) throws(ActionError) {
        app.stateCache = nil
        app.pageCache = nil
        let version = app.root.version
        let values = session.storedValues
        // A screen that is a `View` shows its storage (`@SceneStorage`, whose every change is a
        // new version), the stored values and the session's data: comparing what it adds, as
        // for the others, would render it twice per action.
        let described = app.root.visibleScreen.bodyReader == nil
        let view = described ? app.root.visibleScreen.state() : nil
        let userStoreChanged = session.userDefaultsIfMade?.hasChanges ?? false
        defer {
            if app.root.version == version
                && (session.storedValues != values
                    || (session.userDefaultsIfMade?.hasChanges ?? false) != userStoreChanged
                    || (described && app.root.visibleScreen.state() != view))
            {
                app.root.noteChange()
            }
        }
        try body()
        try checkUserStoreSize(session)
    }

    /// Refuses (413) an action that leaves the user's store over `maxUserStoreBytes`: what it set
    /// there is dropped (the store stays as it was), and the answer says so.
    private func checkUserStoreSize(_ session: SessionContext) throws(ActionError) {
        guard let store = session.userDefaultsIfMade, store.hasChanges,
            let limit = environment.accounts?.maxUserStoreBytes
        else { return }
        let size = UserRecord.encodedByteCount(of: store.storedValues)
        guard size > limit else { return }
        session.discardUserStoreChanges()
        throw ActionError(
            status: 413,
            "The user's store holds at most \(limit) bytes; this change would make it \(size). Nothing was changed.")
    }

    /// Gives `action` to the visible screen's coordinator, `launch` to the app coordinator, or
    /// `show` to the visible screen's routes (`Route`).
    func dispatch(_ action: ActionRequest, _ app: LiveApp) throws(ActionError) {
        if action.name == ActionDescription.launch.name { return try app.coordinator.launch(action) }
        if action.name == ActionDescription.show.name { return try app.show(action) }
        let visible = app.root.visibleScreen
        guard visible.actions.contains(action.name) else {
            throw ActionError(status: 409, "the \(visible.name) screen does not offer \"\(action.name)\"")
        }
        try visible.perform(action)
    }
}
