NP=1
. "$(dirname "$0")/coll_matrix.inc"
