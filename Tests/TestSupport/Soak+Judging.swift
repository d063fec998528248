extension Soak {
    /// What reached the fake, against what should have.
    struct Counts {
        /// Starts accepted per stream and push-to-start token.
        var starts: [String: [String: Int]] = [:]
        var reminders: [String: Int] = [:]
        var lost = 0
        var duplicated = 0
        var unexpected = 0
    }

    /// What happened since the previous reading.
    struct IntervalReadings {
        var startLateness: [Double] = []
        var reminderLateness: [Double] = []
        var starts = 0
        var reminders = 0
    }

    /// Reads what the fake accepted since the last call: counts repeats and unexpected starts, and each push's lateness.
    func consume() throws {
        try tally.refresh()
        let lead = Double(system.startLead)
        let reminderLead = Double(system.settings["REMINDER_LEAD_SECONDS"] ?? "") ?? 0
        let starts = tally.starts(from: consumed.starts)
        consumed.starts += starts.count
        for (key, receivedAt) in starts {
            interval.starts += 1
            guard let plan = plans[key.stream], plan.expectedStarts.contains(key.token) else {
                counts.unexpected += 1
                continue
            }
            interval.startLateness.append(receivedAt - (plan.planned - lead))
            counts.starts[key.stream, default: [:]][key.token, default: 0] += 1
            if counts.starts[key.stream]?[key.token] ?? 0 > 1 { counts.duplicated += 1 }
        }
        let reminders = tally.reminders(from: consumed.reminders)
        consumed.reminders += reminders.count
        for (stream, receivedAt) in reminders {
            interval.reminders += 1
            guard let plan = plans[stream], plan.expectedReminders > 0 else {
                counts.unexpected += 1
                continue
            }
            interval.reminderLateness.append(receivedAt - (plan.planned - reminderLead))
            counts.reminders[stream, default: 0] += 1
            if counts.reminders[stream] ?? 0 > plan.expectedReminders { counts.duplicated += 1 }
        }
    }

    /// After a stream's planned start: every expected start and reminder that has not come is lost.
    func judge(_ id: String) {
        guard let plan = plans[id], !plan.judged else { return }
        try? consume()
        let seen = counts.starts[id] ?? [:]
        counts.lost += plan.expectedStarts.filter { (seen[$0] ?? 0) == 0 }.count
        counts.lost += max(0, plan.expectedReminders - (counts.reminders[id] ?? 0))
        plans[id]?.judged = true
    }
}
