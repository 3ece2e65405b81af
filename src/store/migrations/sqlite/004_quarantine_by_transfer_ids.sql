-- The quarantine found by a transfer's ids: reconciliation (bankTransaction) lists the deliveries
-- kept with the settlementId or sessionId it asks the bank about.
CREATE INDEX collection_quarantine_settlement ON collection_quarantine (settlement_id);
CREATE INDEX collection_quarantine_session ON collection_quarantine (session_id);
