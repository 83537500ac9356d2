# Bar chart of feedcore's advantage over Redis, one bar per headline figure,
# from the data file feedcore-bench --chart_data writes (label, ratio,
# target; target 0 = none).
#
#   gnuplot -e "datafile='ratios.dat'; outfile='docs/benchmarks-vs-redis.png'" \
#     bench/driver/ratio_chart.gp
if (!exists("datafile")) datafile = "ratios.dat"
if (!exists("outfile")) outfile = "benchmarks-vs-redis.png"

set terminal pngcairo size 1280,720 font "sans,10"
set output outfile
set title "feedcore vs Redis: how many times better (ratio of medians, same run)"
set ylabel "feedcore / Redis (log scale)"
set logscale y
set yrange [0.1:*]
set grid ytics
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.7
set xtics rotate by -35 left font ",8" nomirror
set key top right
set bmargin 15
set rmargin 26
plot datafile using 2:xtic(1) title "measured" linecolor rgb "#3070b0", \
     '' using ($0):($3 > 0 ? $3 : 1/0) with points pointtype 7 pointsize 1.5 \
        linecolor rgb "#d04020" title "target", \
     1 with lines dashtype 2 linecolor rgb "#606060" title "parity"
