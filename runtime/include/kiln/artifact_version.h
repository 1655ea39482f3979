/*
 * The .kiln artifact schema version, shared by the compiler's artifact writer
 * and the runtime's reader. Bump it whenever the meaning of a field in
 * runtime/schema/artifact.fbs changes; the runtime refuses any other version.
 */
#ifndef KILN_ARTIFACT_VERSION_H
#define KILN_ARTIFACT_VERSION_H

#define KILN_SCHEMA_VERSION 5

/* Kernel objects, weights and arenas are laid out for this alignment. */
#define KILN_ARTIFACT_ALIGNMENT 64

#endif /* KILN_ARTIFACT_VERSION_H */
