import AppShellJSON

// A live app's snapshot: what the store keeps of it and rebuilds it from after a restart.

extension LiveApp {
    /// The snapshot of the controller tree as it is now.
    package var snapshot: ShellSnapshot {
        ShellSnapshot(
            root: root.child.name,
            stack: root.navigation?.viewControllers.map(\.name) ?? [],
            presented: root.presented?.name,
            coordinators: coordinatorTree,
            log: root.log,
            version: root.version,
            extra: restorationExtra,
            channel: channel,
            transition: root.lastTransition.map { LastTransition(kind: $0.kind, animated: $0.animated) })
    }

    /// What the framework keeps in the snapshot beside the controllers: the start-up work under
    /// way, the notifications not yet delivered, and the screens' restoration states.
    var restorationExtra: JSON {
        var members = startup?.json.objectValue ?? [:]
        if !root.notifications.isEmpty { members["notifications"] = .array(root.notifications.map(\.json)) }
        if let states = ScreenPlace.states(of: root) { members["screens"] = states }
        return .object(members)
    }
}
