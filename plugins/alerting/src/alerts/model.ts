/** Alert priorities, most urgent first. */
export const priorities = ['P1', 'P2', 'P3', 'P4', 'P5'] as const
export type Priority = (typeof priorities)[number]
