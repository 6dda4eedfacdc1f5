// The agreement state of a settlement line (docs/products.md, "Settlement agreed"), stored in
// the transaction's agreement_state column (migration 003) and shown in the specification.
export enum AgreementState {
  /** No response yet, or the last dispute was withdrawn. */
  Unanswered = 0,
  /** The seller accepted the line's figures: final. */
  Accepted = 1,
  /** A dispute is open. */
  Disputed = 2,
  /** The dispute was resolved with the figures the parties settled on: final. */
  Resolved = 3,
}

export const AGREEMENT_NAMES: Readonly<Record<AgreementState, string>> = {
  [AgreementState.Unanswered]: 'unanswered',
  [AgreementState.Accepted]: 'accepted',
  [AgreementState.Disputed]: 'disputed',
  [AgreementState.Resolved]: 'resolved',
};

/** SQL: the transaction (alias) is not final. Final lines keep their figures: delivery
 * validation, by the job or an administrator, no longer changes them. */
export const notFinal = (alias: string) => `${alias}.agreement_state NOT IN (${AgreementState.Accepted}, ${AgreementState.Resolved})`;
