# Resident memory and tail latency over a feedcore_soak run, from its CSV.
#
#   gnuplot -e "datafile='soak.csv'; outfile='docs/soak.png'" bench/soak/plot.gp
if (!exists("datafile")) datafile = "soak.csv"
if (!exists("outfile")) outfile = "soak.png"

set terminal pngcairo size 1100,800 font "sans,10"
set output outfile
set datafile separator ","
set key bottom right opaque
set grid
set xlabel "seconds since start"
set multiplot layout 2,1 title "feedcore soak: constant load with a short TTL"

set title "resident memory, and timeline entries held (TTL eviction keeps pace)"
set ylabel "resident memory (MB)"
set y2label "timeline entries (millions)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
plot datafile using 1:2 with linespoints pointtype 7 pointsize 0.5 \
       linecolor rgb "#3070b0" title "RSS (MB)", \
     '' using 1:($3/1e6) axes x1y2 with lines linecolor rgb "#909090" \
       dashtype 2 title "entries held (millions)"

set title "p99 latency per interval"
set ylabel "microseconds"
unset y2label
unset y2tics
set logscale y
set yrange [*:*]
plot datafile using 1:7 with linespoints pointtype 7 pointsize 0.5 \
       linecolor rgb "#d04020" title "publish p99 (about 20 copies each)", \
     '' using 1:9 with linespoints pointtype 7 pointsize 0.5 \
       linecolor rgb "#30a040" title "timeline page read p99", \
     '' using 1:11 with linespoints pointtype 7 pointsize 0.5 \
       linecolor rgb "#8040b0" title "leaderboard call p99"
unset multiplot
