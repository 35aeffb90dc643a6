// The hook through which a page learns statuses read from a record's place rather than stored on it.
import type { Row } from '../../db/database.js';

/**
 * Statuses of metrics a record should carry and does not yet (scorers enabled in its run that have not
 * run on it). Given the stored row and the metric names it has a value or a stored status for.
 */
export type DerivedStatuses = (row: Row, known: ReadonlySet<string>) => Record<string, Record<string, unknown>> | null;
