// The contract between the products domain's dispatch (src/products/dispatch.ts: what an event
// must say, and the claiming of work) and the VTN that writes it (src/vtn/flexibilityEvents.ts).
// Neither domain imports the other; the wiring file hands the VTN's writer to the products job
// (docs/flexibility-loop.md).

/** What the event of a transaction must say. */
export interface EventPlan {
  venId: string;
  venResourceId: string;
  /** Names the program (the market zone). */
  zoneName: string;
  correlationId: string;
  start: number;
  end: number;
  /** Mean change of consumption over the period, kW: negative = less consumption. */
  setpointKw: number;
}

export interface DispatchItem {
  /** The VTN (organization) of the event: the one it is written to, or was. */
  organizationId: number;
  /** The event written earlier for this transaction, if any. */
  eventId: string | null;
  /** The event wanted now; null: none (the event, if any, is deleted). */
  plan: EventPlan | null;
}

/** The event the transaction has now, or why it has none. */
export type DispatchOutcome = { eventId: string; note: string | null } | { eventId: null; reason: string | null };
