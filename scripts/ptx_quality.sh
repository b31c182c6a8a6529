#!/usr/bin/env bash
# PTX quality of tritonc's output, to compare two compilers (e.g. before and after a
# change to the LLVM pass pipeline): for the tensor-core configs of scripts/gpu/mma_build.sh
# (sm_90 and the sm_90a wgmma ones) and every `// tritonc:` line of tests/kernels (sm_90),
# built by scripts/ptx_corpus.sh, one row per PTX file with ptxas -v's registers and spills
# and the counts of the instructions that matter. ptxas compiles each file for the
# `.target` it names (sm_90 or sm_90a).
# Usage: scripts/ptx_quality.sh OUT_DIR   (writes OUT_DIR/quality.tsv)
#        TRITONC=path/to/tritonc picks the compiler (default: target/release/tritonc).
# Compare two tables with: diff <(cut -f1-4,6- A/quality.tsv) <(cut -f1-4,6- B/quality.tsv)
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:?usage: scripts/ptx_quality.sh OUT_DIR}
export TRITONC=${TRITONC:-./target/release/tritonc}
PTXAS=${PTXAS:-$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13/bin/ptxas"))')}
[ -x "$PTXAS" ] || { echo "ptxas not found (set PTXAS)" >&2; exit 1; }
PTX_CORPUS_OPS=0 bash scripts/ptx_corpus.sh "$O" >/dev/null
# file, regs, spill stores, spill loads, lines (differs between compilers: not compared),
# then instruction counts: all, inside loops (static), and per kind.
out="$O/quality.tsv"
printf 'file\tregs\tspill_st\tspill_ld\tptx_lines\tinstrs\tloop_instrs\tld.global\tst.global\tld.shared\tst.shared\tldmatrix\tmma\tcp.async\tbar\tfma\twgmma\n' >"$out"
find "$O/mma" "$O/kernels" -name '*.ptx' | sort | while read -r p; do
  arch=$(awk '$1 == ".target" { sub(",", "", $2); print $2; exit }' "$p")
  v=$("$PTXAS" -v -arch="${arch:-sm_90}" "$p" -o /dev/null 2>&1)
  regs=$(grep -o 'Used [0-9]* registers' <<<"$v" | awk '{print $2}' | head -1)
  sst=$(grep -o '[0-9]* bytes spill stores' <<<"$v" | awk '{s+=$1} END {print s+0}')
  sld=$(grep -o '[0-9]* bytes spill loads' <<<"$v" | awk '{s+=$1} END {print s+0}')
  awk -v f="${p#"$O"/}" -v r="${regs:-?}" -v s="$sst" -v l="$sld" '
    { n++ }
    /^\$L__/ { sub(":", "", $1); at[$1] = ins }
    /^\t[a-z@]/ && !/^\t\.|^\t\/\// { ins++ }
    # a branch back to a label seen before closes a loop: from the label to its last such branch
    /bra(\.uni)?[ \t]/ { t = $NF; sub(";", "", t); if (t in at) end[t] = ins }
    /ld\.global/ { ldg++ } /st\.global/ { stg++ } /ld\.shared/ { lds++ } /st\.shared/ { sts++ }
    /ldmatrix/ { ldm++ } /mma\./ { mma++ } /cp\.async/ { cpa++ } /bar\.sync|barrier/ { bar++ }
    /fma\./ { fma++ } /wgmma\.mma_async/ { wg++ }
    END { for (t in end) loop += end[t] - at[t]
          printf "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n",
          f, r, s, l, n, ins, loop, ldg, stg, lds, sts, ldm, mma, cpa, bar, fma, wg }' "$p" >>"$out"
done
echo "$(($(wc -l <"$out") - 1)) PTX files -> $out"
